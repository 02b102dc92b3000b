irt-print testdata/compat/v1/geom.fb
