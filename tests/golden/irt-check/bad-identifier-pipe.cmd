make_bad_traces bad-identifier t.fb && cat t.fb | irt-check
