# usage errors exit 2, every one of them
irt-trace testdata/ir/f.ir f 1.0 -o f.fb
irt-grad --mode sideways f.fb; echo "exit $?"
irt-grad --wrt 2x f.fb; echo "exit $?"
irt-grad --tangent @2=1.0 f.fb; echo "exit $?"
irt-grad --mode forward f.fb; echo "exit $?"
irt-grad --seed "[1.0" f.fb; echo "exit $?"
irt-grad --emit-trace --annotate f.fb; echo "exit $?"
