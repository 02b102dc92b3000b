# The Trace Event Format: one complete event per call; checked by the
# structural check of tests/export/validate.py (no JSON schema is published).
irt-trace -o geom.fb --rand-values 0.9,0.7,0.1 testdata/ir/geom.ir geom 1 0.5
irt-export --chrome-trace geom.fb | tee geom.json
/usr/bin/python3 "$IRT_SOURCE/tests/export/validate.py" chrome geom.json
irt-trace --rand-values 0.9,0.7,0.1 testdata/ir/geom.ir geom 1 0.5 | irt-export --chrome-trace - | cmp - geom.json && echo same
