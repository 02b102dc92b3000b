make_bad_traces newer-major newer-major.fb && irt-print newer-major.fb
