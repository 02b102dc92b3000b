# x and its next double: different bit for bit, the same within --rtol
irt-trace -o a.fb testdata/ir/f.ir f 1.0
irt-trace -o b.fb testdata/ir/f.ir f 1.0000000000000002
irt-diff --ignore-meta args a.fb b.fb; echo "exit $?"
irt-diff --ignore-meta args --rtol 1e-12 a.fb b.fb; echo "exit $?"
irt-diff --ignore-meta args --atol 1e-17 --stat a.fb b.fb | grep -E 'values|same|different'
