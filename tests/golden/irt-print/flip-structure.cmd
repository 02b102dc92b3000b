make_bad_traces flip-structure flip-structure.fb && irt-print flip-structure.fb
