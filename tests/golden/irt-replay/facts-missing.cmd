# a 1.1 trace without control-flow facts for f: replay says what it could
# not check
make_bad_traces facts-missing t.fb
irt-replay --set @2=2.0 -o out.fb t.fb; echo "exit $?"
