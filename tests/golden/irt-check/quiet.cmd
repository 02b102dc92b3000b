# -q prints errors only: a valid trace gives no summary, just status 0
irt-trace -o h.fb testdata/ir/h.ir h 2.0 2
irt-check -q h.fb; echo "status $?"
irt-check -q --json h.fb; echo "status $?"
# a summary asked for with -o is still written
irt-check -q -o s.txt h.fb && tail -1 s.txt
