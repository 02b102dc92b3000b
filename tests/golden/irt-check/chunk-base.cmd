make_bad_traces chunk-base chunk-base.fb && irt-check chunk-base.fb
