make_bad_traces ref-before-start ref-before-start.fb && irt-print ref-before-start.fb
