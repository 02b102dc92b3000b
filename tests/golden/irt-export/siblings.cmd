# Sibling calls at two levels: spans side by side, the same site one frame.
irt-trace -o s.fb testdata/ir/siblings.ir sib 0.5 2
irt-export --speedscope s.fb | jq -c '.shared.frames, .profiles[0].events'
irt-export --chrome-trace s.fb | jq -c '.traceEvents[] | select(.ph == "X") | [.name, .ts, .dur, .args.path]'
irt-export --chrome-trace s.fb > s.json && /usr/bin/python3 "$IRT_SOURCE/tests/export/validate.py" chrome s.json
