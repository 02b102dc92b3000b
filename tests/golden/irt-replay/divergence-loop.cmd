# one more iteration of the loop is not a replay: the loop condition changes
irt-trace -o h.fb testdata/ir/h.ir h 2.0 3
irt-replay --set @3=4 h.fb > out.fb; echo "exit $?"
wc -c < out.fb
