# Every reader refuses a tuple that would decode to 2^30 leaves (2.4 KB on disk).
make_bad_traces tuple-bomb bomb.fb && make_bad_traces valid ok.fb
irt-print bomb.fb; echo "irt-print $?"
irt-print --json bomb.fb; echo "irt-print --json $?"
irt-slice --backward @2 bomb.fb; echo "irt-slice $?"
irt-dot bomb.fb; echo "irt-dot $?"
irt-grad bomb.fb; echo "irt-grad $?"
irt-grad --mode forward --tangent @2=1.0 bomb.fb; echo "irt-grad --mode forward $?"
irt-diff bomb.fb ok.fb; echo "irt-diff $?"
irt-replay --set @2=2.0 bomb.fb; echo "irt-replay $?"
irt-stats bomb.fb; echo "irt-stats $?"
