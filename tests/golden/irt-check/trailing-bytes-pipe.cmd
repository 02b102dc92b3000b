make_bad_traces trailing-bytes t.fb && cat t.fb | irt-check
