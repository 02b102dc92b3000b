irt-check --json testdata/compat/v1/geom.fb
