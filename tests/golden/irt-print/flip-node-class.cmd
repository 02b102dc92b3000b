make_bad_traces flip-node-class flip-node-class.fb && irt-print flip-node-class.fb
