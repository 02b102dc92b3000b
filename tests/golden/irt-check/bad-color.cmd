make_bad_traces valid t.fb && irt-check --color=sometimes t.fb
