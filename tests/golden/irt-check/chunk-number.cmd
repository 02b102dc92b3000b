make_bad_traces chunk-number chunk-number.fb && irt-check chunk-number.fb
