make_bad_traces ref-before-start ref-before-start.fb && irt-check ref-before-start.fb
