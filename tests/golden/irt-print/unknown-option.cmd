make_bad_traces valid t.fb && irt-print --bogus t.fb
