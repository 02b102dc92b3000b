make_bad_traces truncated t.fb && irt-stats t.fb
