make_bad_traces valid t.fb && irt-print -n @9 t.fb
