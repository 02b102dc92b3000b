irt-trace testdata/ir/h.ir h 2.0 2 -o h.fb
irt-slice -b @0 h.fb; echo "status $?"
irt-slice -b @2/ h.fb; echo "status $?"
irt-slice -b @2x --list h.fb
