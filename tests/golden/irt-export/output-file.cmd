# -o FILE and a trace read from a pipe give what stdout gives.
irt-trace -o h.fb testdata/ir/h.ir h 2.0 2
irt-export --jsonl -o h.jsonl h.fb
irt-trace testdata/ir/h.ir h 2.0 2 | irt-export --jsonl - | cmp - h.jsonl && echo same
irt-export --jsonl -o h.jsonl.zst h.fb && zstd -dc h.jsonl.zst | cmp - h.jsonl && echo same compressed
wc -l < h.jsonl
