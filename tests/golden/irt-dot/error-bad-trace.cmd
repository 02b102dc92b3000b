make_bad_traces truncated t.fb && irt-dot t.fb
