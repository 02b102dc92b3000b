make_bad_traces format-zero format-zero.fb && irt-check format-zero.fb
