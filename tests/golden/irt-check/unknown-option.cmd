make_bad_traces valid t.fb && irt-check --bogus t.fb
