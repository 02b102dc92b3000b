# Usage errors exit 2 before any output is created
irt-trace; echo "status $?"
irt-trace --frobnicate testdata/ir/f.ir f 1.0; echo "status $?"
irt-trace --max-depth -1 testdata/ir/f.ir f 1.0; echo "status $?"
irt-trace --max-steps x testdata/ir/f.ir f 1.0; echo "status $?"
irt-trace --max-steps -1 testdata/ir/f.ir f 1.0; echo "status $?"
irt-trace --max-steps 99999999999999999999999 testdata/ir/f.ir f 1.0; echo "status $?"
irt-trace -o out.fb testdata/ir/f.ir nosuch 1.0; echo "status $?"
irt-trace -o out.fb testdata/ir/f.ir f; echo "status $?"
irt-trace -o out.fb testdata/ir/f.ir f 1.0 2.0; echo "status $?"
irt-trace -o out.fb testdata/ir/f.ir f "[1.0, "; echo "status $?"
irt-trace -o out.fb testdata/ir/f.ir f @missing.npy; echo "status $?"
irt-trace -o out.fb --rand-values 0.5,x testdata/ir/geom.ir geom 1 0.5; echo "status $?"
ls out.fb 2>&1
