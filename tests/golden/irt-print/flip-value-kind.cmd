make_bad_traces flip-value-kind flip-value-kind.fb && irt-print flip-value-kind.fb
