make_bad_traces truncated truncated.fb && irt-check truncated.fb
