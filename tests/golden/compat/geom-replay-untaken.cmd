# Replay of a 1.0 file checks the branches not taken against the facts
# derived from its IR text, as it always did (expected output made by the
# irtrace that wrote 1.0)
irt-replay --set @8/@8/@4=0.9 -o out.fb testdata/compat/v1/geom.fb; echo "exit $?"
