make_bad_traces valid t.fb && irt-check -o . t.fb
