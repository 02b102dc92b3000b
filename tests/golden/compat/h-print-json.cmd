irt-print --json testdata/compat/v1/h.fb | jq -S .
