make_bad_traces no-final-chunk t.fb && cat t.fb | irt-print --partial
