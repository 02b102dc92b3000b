irt-check testdata/compat/v1/h.fb
