make_bad_traces valid t.fb && irt-check -o summary.txt t.fb && ls summary.txt* && cat summary.txt
