make_bad_traces odd-producer t.fb && irt-check --json t.fb | jq -c .producer
