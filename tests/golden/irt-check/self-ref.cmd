make_bad_traces self-ref self-ref.fb && irt-check self-ref.fb
