make_bad_traces unclosed-call unclosed-call.fb && irt-check unclosed-call.fb
