make_bad_traces truncated t.fb && irt-print --partial t.fb
