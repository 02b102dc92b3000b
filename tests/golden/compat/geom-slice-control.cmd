# A 1.0 file has no control-flow facts: they are derived from its IR text,
# so --control gives what it always gave (expected output made by the
# irtrace that wrote 1.0): the draw that decided the deepest call, through
# the branch not taken before its return.
irt-slice -b @8/@8/@6 -t -c --list testdata/compat/v1/geom.fb
irt-slice -F @4 -c --list testdata/compat/v1/geom.fb
