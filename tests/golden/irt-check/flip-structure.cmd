make_bad_traces flip-structure flip-structure.fb && irt-check flip-structure.fb
