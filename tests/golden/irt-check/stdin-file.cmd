make_bad_traces valid t.fb && irt-check < t.fb
