make_bad_traces tensor-none tensor-none.fb && irt-check tensor-none.fb
