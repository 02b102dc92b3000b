# golden: release-only
# 10^6 calls deep: paths stop past depth 32, parent and pos still place every
# node; the walk keeps one frame per open call.
irt-trace -o deep.fb testdata/ir/deep.ir deep
irt-export --jsonl deep.fb | awk 'NR <= 3 || NR == 171 { print } { last = $0 } END { print last; print NR " lines" }'
