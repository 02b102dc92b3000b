# no argument has a derivative (Int, Bool and Nothing have none)
irt-trace testdata/ir/geom.ir geom 1 0.5 --seed 3 -o g.fb
irt-grad g.fb; echo "exit $?"
irt-trace testdata/ir/h.ir h 2.0 2 | irt-grad --wrt @3; echo "exit $?"
