make_bad_traces newer-minor newer-minor.fb && irt-check newer-minor.fb
