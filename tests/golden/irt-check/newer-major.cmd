make_bad_traces newer-major newer-major.fb && irt-check newer-major.fb
