# a failed run leaves a complete trace: Error nodes close every open call
irt-trace testdata/ir/error.ir outer 0 > e.fb; echo "irt-trace exit $?"
irt-check e.fb | tail -1
irt-print e.fb
