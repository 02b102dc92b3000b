make_bad_traces tensor-size tensor-size.fb && irt-check tensor-size.fb
