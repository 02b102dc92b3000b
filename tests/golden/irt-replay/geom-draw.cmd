# a random draw moved without changing the path, as an MCMC move does; the
# draws of the replayed trace are the recorded ones, but for the one set
irt-trace --rand-values 0.9,0.3 -o g.fb testdata/ir/geom.ir geom 1 0.5
irt-replay -v --set @8/@4=0.1 -o moved.fb g.fb
irt-diff g.fb moved.fb
irt-trace --rand-values 0.9,0.1 -o fresh.fb testdata/ir/geom.ir geom 1 0.5
irt-diff --ignore-meta rand_values moved.fb fresh.fb; echo "exit $?"
