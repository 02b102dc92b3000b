make_bad_traces chunk-base chunk-base.fb && irt-print chunk-base.fb
