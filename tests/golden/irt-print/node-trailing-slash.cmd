make_bad_traces valid t.fb && irt-print -n @3/ t.fb
