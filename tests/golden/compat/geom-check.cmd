irt-check testdata/compat/v1/geom.fb
