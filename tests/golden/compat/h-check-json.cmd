irt-check --json testdata/compat/v1/h.fb
