# Every primitive once: literals with their types, NaN and infinities as
# strings, a tensor, abbreviated with --max-elements.
irt-trace -o p.fb testdata/ir/prims.ir prims 0.5 3 --seed 1
irt-export --jsonl p.fb | jq -c '[.id, .op, .args, .value, .type]'
irt-trace testdata/ir/f.ir f '[1.0, 2.0, 3.0]' | irt-export --jsonl --max-elements 2 | jq -c '[.id, .value]'
irt-trace testdata/ir/cossin.ir cs 0.7 | irt-grad --emit-trace | irt-export --jsonl | jq -c 'select(.meta) | [.id, .meta]'
# The lines parse one by one, and their ids count the nodes.
irt-export --jsonl p.fb | /usr/bin/python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert [r["id"] for r in rows] == list(range(len(rows)))
print(len(rows), "lines")'
irt-check p.fb | sed -n 4p
