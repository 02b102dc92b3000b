irt-print --json testdata/compat/v1/geom.fb | jq -S .
