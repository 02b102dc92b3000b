make_bad_traces newer-major t.fb && cat t.fb | irt-check -
