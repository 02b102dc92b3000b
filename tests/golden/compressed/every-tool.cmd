# A trace written to a *.zst path is zstd-compressed; every tool reads a
# compressed trace (file or pipe) as if it were the plain one.
irt-trace -o h.fb testdata/ir/h.ir h 2.0 2
irt-trace -o h.fb.zst testdata/ir/h.ir h 2.0 2
zstd -q -t h.fb.zst && echo "a valid zstd file"
zstd -q -dc h.fb.zst | cmp - h.fb && echo "decompresses to the plain trace"
irt-print --levels 1 h.fb.zst
irt-check h.fb.zst | tail -1
cat h.fb.zst | irt-check - | tail -1
irt-stats --json h.fb.zst | jq -c '{nodes, calls, bytes}'
irt-slice -l -b @26 -t h.fb.zst | head -3
irt-dot --levels 1 h.fb.zst | head -1
irt-grad h.fb.zst
irt-diff --stat h.fb h.fb.zst
irt-replay --set @2=3.0 h.fb.zst | irt-print --levels 1
# outputs to *.zst: a slice, a backward pass, a listing
irt-slice -b @26 -o s.fb.zst h.fb.zst && irt-print --levels 1 s.fb.zst
irt-grad --emit-trace -o g.fb.zst h.fb.zst && irt-grad g.fb.zst | head -2
irt-print -o h.txt.zst h.fb && zstd -q -dc h.txt.zst | head -2
# compressed by zstd(1), at any level, in several frames
zstd -q -19 -c h.fb > h19.zst && irt-print --levels 1 h19.zst
(head -c 1000 h.fb | zstd -q -c; tail -c +1001 h.fb | zstd -q -c) > two.zst && irt-check two.zst | tail -1
