make_bad_traces no-final-chunk t.fb && irt-print --partial t.fb
