irt-print --no-meta --levels 2 testdata/compat/v1/geom.fb
