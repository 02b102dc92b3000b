make_bad_traces bad-identifier t.fb && irt-slice -b @1 t.fb
