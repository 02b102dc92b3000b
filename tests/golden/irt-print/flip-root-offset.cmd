make_bad_traces flip-root-offset flip-root-offset.fb && irt-print flip-root-offset.fb
