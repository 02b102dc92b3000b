make_bad_traces flip-class-kind flip-class-kind.fb && irt-print flip-class-kind.fb
