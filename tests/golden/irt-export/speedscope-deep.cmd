# A recursion 10^4 calls deep: deeper than speedscope itself reads (its
# default limit is 2500 levels), written with a larger --max-depth for other
# readers, valid against the schema.
irt-trace -o deep.fb testdata/ir/deep.ir down 10000
irt-export --speedscope -o deep.json deep.fb; echo "status $?"
irt-export --speedscope --max-depth 20000 -o deep.json deep.fb
/usr/bin/python3 "$IRT_SOURCE/tests/export/validate.py" speedscope "$("$IRT_SOURCE/tests/export/speedscope-schema.sh")" deep.json
jq -c '.shared.frames, .profiles[0].endValue, .profiles[0].events[0:3], .profiles[0].events[-2:]' deep.json
