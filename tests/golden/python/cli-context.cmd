# golden: release-only
# (The Python package is built in the release build only.)
# irt-trace's context options: --seed seeds Python's random (the seed's
# geom with random.seed(2) gives the trace of python/geom), --max-depth and
# --primitive record calls as one Primitive node, --tag-random tags draws.
. golden/cli.sh
python3 -m irtrace trace -o g.fb --seed 2 golden/seed.py geom 1 0.5
python3 -c 'import irtrace, random, sys; sys.path.insert(0, "golden"); import seed
random.seed(2); irtrace.track(seed.geom, 1, 0.5, out="t.fb")'
diff <(irt-print t.fb) <(irt-print g.fb) && echo "same trace as irtrace.track after random.seed(2)"
python3 -m irtrace trace --seed 2 --max-depth 2 --tag-random golden/seed.py geom 1 0.5 | irt-print
python3 -m irtrace trace --primitive g2 --primitive g1 golden/seed.py fails 0.9 | irt-print; echo "status $?"
python3 -m irtrace trace --max-depth -1 golden/seed.py f 1.0; echo "status $?"
python3 -m irtrace trace --primitive nosuch golden/seed.py f 1.0; echo "status $?"
