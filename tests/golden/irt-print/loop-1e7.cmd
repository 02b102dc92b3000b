# golden: release-only
# a loop of 10^7 nodes is traced, checked and printed at --levels 2
irt-trace testdata/ir/loop.ir loop 0.999999 -o loop.fb
irt-check loop.fb | grep -E 'nodes|depth'
irt-print --levels 2 loop.fb
irt-print --node @3 --levels 2 loop.fb | head -12
irt-print --node @3 --levels 2 loop.fb | tail -3
