make_bad_traces format-zero format-zero.fb && irt-print format-zero.fb
