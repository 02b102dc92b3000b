make_bad_traces valid t.fb && irt-print -o . t.fb
