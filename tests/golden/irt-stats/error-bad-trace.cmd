make_bad_traces base-depth t.fb && irt-stats t.fb
