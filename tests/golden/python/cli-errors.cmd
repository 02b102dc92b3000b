# golden: release-only
# (The Python package is built in the release build only.)
# Errors exit 1 with one line "irtrace: error: ..." naming the file. A
# function that raises leaves its complete trace (status "failed"); a
# construct that is not traced is refused before anything runs (the
# adapter's message: place, source line, hint), and no trace is written.
. golden/cli.sh
python3 -m irtrace trace -o x.fb testdata/python/examples.py fails 1.0; echo "status $?"
irt-check x.fb | grep -v ^bytes
irt-print x.fb
python3 -m irtrace trace golden/seed.py fails 0.9 | irt-print --levels 1; echo "status $?"
python3 -m irtrace trace -o u.fb golden/seed.py unsupported 2.0; echo "status $?"
python3 -m irtrace trace -o out.fb missing.py f 1.0; echo "status $?"
python3 -m irtrace trace -o out.fb testdata f 1.0; echo "status $?"
python3 -m irtrace trace -o out.fb golden/seed.py f @missing.npy; echo "status $?"
python3 -m irtrace trace -o nodir/out.fb golden/seed.py f 1.0; echo "status $?"
printf 'raise RuntimeError("no")\n' > boom.py
python3 -m irtrace trace -o out.fb boom.py f 1.0; echo "status $?"
printf 'def f(x):\n    return x +\n' > bad.py
python3 -m irtrace trace -o out.fb bad.py f 1.0; echo "status $?"
ls
