make_bad_traces trailing-bytes trailing-bytes.fb && irt-print trailing-bytes.fb
