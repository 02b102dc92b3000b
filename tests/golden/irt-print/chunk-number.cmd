make_bad_traces chunk-number chunk-number.fb && irt-print chunk-number.fb
