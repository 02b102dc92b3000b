cat testdata/compat/v1/geom.fb | irt-print --levels 1
