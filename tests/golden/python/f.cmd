# golden: release-only
# (The Python package is built in the release build only.)
# f(x) = sin(x) + x written in Python prints the seed's listing: the same
# nodes, blocks and SSA ids as irt-trace's trace of testdata/ir/f.ir.
. golden/common.sh
py 'irtrace.track(seed.f, 1.0, out="f.fb")'
irt-print f.fb
irt-trace testdata/ir/f.ir f 1.0 -o t.fb
diff <(irt-print t.fb) <(irt-print f.fb) && echo "same listing as irt-trace"
irt-check f.fb | grep -v ^bytes
