# A recursion 10^4 calls deep reads as a flame graph, valid against the schema.
irt-trace -o deep.fb testdata/ir/deep.ir down 10000
irt-export --speedscope -o deep.json deep.fb
/usr/bin/python3 "$IRT_SOURCE/tests/export/validate.py" speedscope "$("$IRT_SOURCE/tests/export/speedscope-schema.sh")" deep.json
jq -c '.shared.frames, .profiles[0].endValue, .profiles[0].events[0:3], .profiles[0].events[-2:]' deep.json
