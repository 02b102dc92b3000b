make_bad_traces first-not-call first-not-call.fb && irt-check first-not-call.fb
