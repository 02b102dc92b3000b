make_bad_traces valid t.fb && irt-print -n x t.fb
