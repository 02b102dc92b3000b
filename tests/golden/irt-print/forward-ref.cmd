make_bad_traces forward-ref forward-ref.fb && irt-print forward-ref.fb
