make_bad_traces flip-value-kind flip-value-kind.fb && irt-check flip-value-kind.fb
