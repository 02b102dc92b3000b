make_bad_traces valid t.fb && irt-check --json t.fb
