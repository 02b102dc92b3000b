make_bad_traces flip-node-class flip-node-class.fb && irt-check flip-node-class.fb
