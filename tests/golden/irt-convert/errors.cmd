# Usage errors exit 2; a trace that is cut or corrupt exits 1 and leaves no
# output file.
irt-trace -o h.fb testdata/ir/h.ir h 2.0 3
irt-convert --format 3 h.fb -o out.fb; echo "exit $?"
irt-convert --format two h.fb -o out.fb; echo "exit $?"
irt-convert no-such.fb -o out.fb; echo "exit $?"
head -c 1000 h.fb > cut.fb
irt-convert --format 1 cut.fb -o out.fb; echo "exit $?"
ls out.fb 2>/dev/null || echo "no out.fb"
