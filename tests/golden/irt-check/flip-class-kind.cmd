make_bad_traces flip-class-kind flip-class-kind.fb && irt-check flip-class-kind.fb
