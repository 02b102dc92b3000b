irt-trace -o a.fb testdata/ir/f.ir f 1.0
irt-diff a.fb testdata/ir/f.ir
