make_bad_traces unclosed-call unclosed-call.fb && irt-print unclosed-call.fb
