irt-trace -o f.fb testdata/ir/f.ir f 1.0
irt-export f.fb; echo "status $?"
irt-export --jsonl --speedscope f.fb; echo "status $?"
irt-export --jsonl --max-depth -1 f.fb; echo "status $?"
irt-export --bogus f.fb; echo "status $?"
