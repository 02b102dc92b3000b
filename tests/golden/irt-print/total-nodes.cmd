make_bad_traces total-nodes total-nodes.fb && irt-print total-nodes.fb
