make_bad_traces trailing-bytes trailing-bytes.fb && irt-check trailing-bytes.fb
