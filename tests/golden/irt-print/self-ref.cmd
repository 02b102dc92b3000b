make_bad_traces self-ref self-ref.fb && irt-print self-ref.fb
