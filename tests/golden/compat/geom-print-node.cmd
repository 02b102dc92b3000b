irt-print -n @8/@8 testdata/compat/v1/geom.fb
