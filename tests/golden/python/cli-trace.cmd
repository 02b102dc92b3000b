# golden: release-only
# (The Python package is built in the release build only.)
# python3 -m irtrace trace records a function of a Python file as irt-trace
# records an IR function: the seed's f gives irt-trace's listing, to
# standard output or (-o) to a file; arguments in irt-trace's syntax.
. golden/cli.sh
python3 -m irtrace trace golden/seed.py f 1.0 | irt-print
diff <(irt-trace testdata/ir/f.ir f 1.0 | irt-print) \
  <(python3 -m irtrace trace golden/seed.py f 1.0 | irt-print) && echo "same listing as irt-trace"
python3 -m irtrace trace -o h.fb golden/seed.py h 2.0 2; echo "exit $?"
irt-print --levels 1 h.fb
irt-grad h.fb
irt-print --json h.fb | jq -c .meta | sed "s|$PWD/||"
# Float64, Int64 and Bool literals, a tensor literal or a .npy file, a
# negative number (after -- or not), the same file run from another directory.
python3 -c 'import numpy as np; np.save("a.npy", np.array([[1.0, 2.0], [3.0, 4.0]]))'
python3 -m irtrace trace testdata/python/examples.py sumsq @a.npy 0.5 true | irt-print --levels 2
python3 -m irtrace trace testdata/python/examples.py sumsq '[1 2; 3 4]' 2 false | irt-print --levels 1
python3 -m irtrace trace testdata/python/examples.py h -- -2.0 3 | irt-print --levels 1
(cd / && python3 -m irtrace trace "$OLDPWD/testdata/python/examples.py" h -2.0 3) | irt-print --levels 1
# -o replaces a file atomically (no temporary file is left); FILE.zst is compressed.
python3 -m irtrace trace -o h.fb.zst golden/seed.py h 2.0 2 && irt-check h.fb.zst | grep -v ^bytes
cmp <(irt-print h.fb) <(irt-print h.fb.zst) && echo "h.fb.zst holds the same trace"
ls -A
