make_bad_traces newer-minor newer-minor.fb && irt-print newer-minor.fb
