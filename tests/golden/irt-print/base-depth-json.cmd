# a wrong base_depth is refused by every tool, as irt-check refuses it
make_bad_traces base-depth t.fb && irt-print --json t.fb | jq -c .root.kind
