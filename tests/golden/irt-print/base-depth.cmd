make_bad_traces base-depth base-depth.fb && irt-print base-depth.fb
