# golden: release-only
# (The Python package is built in the release build only.)
# Usage errors exit 2 before anything runs or any output is created, with
# a line pointing to --help; a terminal is refused as the output unless -f.
. golden/cli.sh
python3 -m irtrace; echo "status $?"
python3 -m irtrace frobnicate; echo "status $?"
python3 -m irtrace trace; echo "status $?"
python3 -m irtrace trace --frobnicate golden/seed.py f 1.0; echo "status $?"
python3 -m irtrace trace -o out.fb golden/seed.py nosuch 1.0 2>&1 | sed 's/(it defines .*)/(it defines ...)/'; echo "status $?"
python3 -m irtrace trace -o out.fb golden/seed.py f; echo "status $?"
python3 -m irtrace trace -o out.fb golden/seed.py f 1.0 2.0; echo "status $?"
python3 -m irtrace trace -o out.fb testdata/python/examples.py sumsq 1.0; echo "status $?"
python3 -m irtrace trace -o out.fb golden/seed.py f "[1.0, "; echo "status $?"
python3 -m irtrace trace -o out.fb golden/seed.py f -x; echo "status $?"
python3 -m irtrace trace -o out.fb golden/seed.py math 1.0; echo "status $?"
ls out.fb 2>&1
T="python3 $IRT_SOURCE/tests/golden/onterminal.py --stdout --bytes --"
$T python3 -m irtrace trace golden/seed.py f 1.0
$T python3 -m irtrace trace -f golden/seed.py f 1.0
