make_bad_traces stray-bytes stray-bytes.fb && irt-check stray-bytes.fb
