make_bad_traces valid t.fb && irt-print -n @3/@1 t.fb
