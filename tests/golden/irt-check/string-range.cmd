make_bad_traces string-range string-range.fb && irt-check string-range.fb
