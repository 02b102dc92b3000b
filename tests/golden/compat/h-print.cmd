irt-print testdata/compat/v1/h.fb
