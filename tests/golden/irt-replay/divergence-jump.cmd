# the first draw now falls below β: the recorded jump would not be taken
irt-trace --rand-values 0.9,0.3 -o g.fb testdata/ir/geom.ir geom 1 0.5
irt-replay --set @4=0.1 -o out.fb g.fb; echo "exit $?"
test -e out.fb || echo "no output written"
