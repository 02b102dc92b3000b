make_bad_traces stray-bytes stray-bytes.fb && irt-print stray-bytes.fb
