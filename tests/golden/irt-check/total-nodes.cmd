make_bad_traces total-nodes total-nodes.fb && irt-check total-nodes.fb
