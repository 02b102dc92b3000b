make_bad_traces flip-root-offset flip-root-offset.fb && irt-check flip-root-offset.fb
