# h(2.0, 3) replayed at x = 3.0 is h(3.0, 3) traced afresh (but for the
# arguments the adapter noted in the trace's metadata)
irt-trace -o h.fb testdata/ir/h.ir h 2.0 3
irt-replay -v --set @2=3.0 -o h3.fb h.fb
irt-print h3.fb
irt-trace -o fresh.fb testdata/ir/h.ir h 3.0 3
irt-diff --ignore-meta args h3.fb fresh.fb; echo "exit $?"
cmp h3.fb fresh.fb > /dev/null || echo "the files differ (trace metadata args)"
