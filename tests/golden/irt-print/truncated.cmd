make_bad_traces truncated truncated.fb && irt-print truncated.fb
