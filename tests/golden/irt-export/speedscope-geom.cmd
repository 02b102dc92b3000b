# Calls as spans as wide as their nodes, named by callee and call site, and
# valid against speedscope's published schema (fetched from npm into the
# build directory: tests/export/speedscope-schema.sh).
irt-trace -o geom.fb --rand-values 0.9,0.7,0.1 testdata/ir/geom.ir geom 1 0.5
irt-export --speedscope geom.fb | tee geom.json
/usr/bin/python3 "$IRT_SOURCE/tests/export/validate.py" speedscope "$("$IRT_SOURCE/tests/export/speedscope-schema.sh")" geom.json
# From a pipe (copied to a temporary file for the two passes): the same.
irt-trace --rand-values 0.9,0.7,0.1 testdata/ir/geom.ir geom 1 0.5 | irt-export --speedscope | cmp - geom.json && echo same
