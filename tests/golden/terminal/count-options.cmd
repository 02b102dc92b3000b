# Count options take decimal digits only: "-1" is not wrapped to 2^64 - 1.
irt-trace -o f.fb testdata/ir/f.ir f 1.0
irt-print --levels -1 f.fb; echo "status $?"
irt-print --max-elements 1e3 f.fb; echo "status $?"
irt-dot --max-nodes -1 f.fb; echo "status $?"
irt-dot --levels +2 f.fb; echo "status $?"
irt-slice --max-elements -1 -l -b @5 f.fb; echo "status $?"
irt-stats --top -3 f.fb; echo "status $?"
irt-diff -U -1 f.fb f.fb; echo "status $?"
irt-grad --max-elements=-1 f.fb; echo "status $?"
irt-trace --seed -1 testdata/ir/f.ir f 1.0; echo "status $?"
irt-trace --max-depth 18446744073709551616 testdata/ir/f.ir f 1.0; echo "status $?"
