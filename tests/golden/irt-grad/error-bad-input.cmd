# unreadable input: a missing file, not a trace, a failed run (exit 1); a
# --wrt position the root call does not have is a usage error (exit 2)
irt-grad missing.fb; echo "exit $?"
echo "not a trace at all" > junk.fb
irt-grad junk.fb; echo "exit $?"
irt-trace testdata/ir/error.ir outer 0 -o e.fb
irt-grad e.fb; echo "exit $?"
irt-trace testdata/ir/h.ir h 2.0 2 | irt-grad --wrt @9; echo "exit $?"
