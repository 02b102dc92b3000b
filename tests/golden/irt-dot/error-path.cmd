irt-trace testdata/ir/h.ir h 2.0 2 -o h.fb
irt-dot --node @30 h.fb; echo "exit $?"
irt-dot --node @4/@1 h.fb; echo "exit $?"
