make_bad_traces forward-ref t.fb && irt-print -q t.fb
