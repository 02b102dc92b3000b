make_bad_traces first-not-call first-not-call.fb && irt-print first-not-call.fb
