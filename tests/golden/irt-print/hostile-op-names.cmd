# Names from a trace in text are escaped (control characters, bytes that are
# not UTF-8) and cut past 1024 bytes; JSON output stays valid JSON.
for v in op-forge op-utf8 op-long; do make_bad_traces $v $v.fb; done
make_bad_traces valid ok.fb
irt-print op-forge.fb
irt-print op-utf8.fb
irt-print op-long.fb | wc -c
irt-stats op-forge.fb | grep sin
irt-slice --list -b @4 op-utf8.fb
irt-diff ok.fb op-forge.fb; echo "status $?"
json() { python3 -c 'import json, sys; d = json.load(sys.stdin); print("valid JSON")'; }
for v in op-forge op-utf8 op-long; do
  irt-print --json $v.fb | json
  irt-stats --json $v.fb | json
  irt-diff --json ok.fb $v.fb | json
done
irt-print --json op-utf8.fb | python3 -c 'import json, sys; print(json.load(sys.stdin)["root"]["children"][2]["op"])'
