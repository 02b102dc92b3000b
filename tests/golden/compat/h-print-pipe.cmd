cat testdata/compat/v1/h.fb | irt-print --levels 1
