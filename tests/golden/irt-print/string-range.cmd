make_bad_traces string-range string-range.fb && irt-print string-range.fb
