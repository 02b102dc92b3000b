make_bad_traces valid t.fb && irt-print --color=sometimes t.fb
