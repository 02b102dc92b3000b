make_bad_traces tensor-size tensor-size.fb && irt-print tensor-size.fb
