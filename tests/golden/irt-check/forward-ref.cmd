make_bad_traces forward-ref forward-ref.fb && irt-check forward-ref.fb
