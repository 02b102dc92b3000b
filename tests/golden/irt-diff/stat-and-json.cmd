irt-trace -o a.fb testdata/ir/f.ir f 1.0
irt-diff --stat --json a.fb a.fb
