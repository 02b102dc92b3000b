make_bad_traces forward-ref t.fb && irt-check -q t.fb
