make_bad_traces truncated t.fb && cat t.fb | irt-check
