# The checker's messages, for each format; nothing half-written with -o.
make_bad_traces base-depth t.fb
irt-export --jsonl t.fb; echo "status $?"
irt-export --speedscope t.fb; echo "status $?"
irt-export --chrome-trace -o out.json t.fb; echo "status $?"
make_bad_traces truncated u.fb
irt-export --speedscope u.fb; echo "status $?"
ls
