make_bad_traces valid t.fb && irt-print -l many t.fb
