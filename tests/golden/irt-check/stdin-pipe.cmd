make_bad_traces valid t.fb && cat t.fb | irt-check --json -
