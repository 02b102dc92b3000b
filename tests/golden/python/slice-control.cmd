# golden: release-only
# (The Python package is built in the release build only.)
# irt-slice --control on Python traces: h's return with every loop test and
# branch that led there; geom's result through its nested calls, with the
# draws of random.random() that decided it.
. golden/common.sh
py 'irtrace.track(seed.h, 2.0, 2, out="h.fb")
random.seed(2); irtrace.track(seed.geom, 1, 0.5, out="g.fb")'
irt-slice -b @25 --control --list h.fb
echo "without --control: $(irt-slice -b @25 --list h.fb | wc -l) lines"
irt-slice -b @9 --through-calls --control --list g.fb
