make_bad_traces base-depth t.fb && irt-print --json t.fb | jq -c .root.kind
