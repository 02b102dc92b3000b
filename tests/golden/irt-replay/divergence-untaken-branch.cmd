# the second draw now stays above β: `br 2 unless %5`, not taken before the
# recorded return, would be taken now
irt-trace --rand-values 0.9,0.3 -o g.fb testdata/ir/geom.ir geom 1 0.5
irt-replay --set @8/@4=0.8 -o out.fb g.fb; echo "exit $?"
