# golden: release-only
# 10^6 calls deep: paths stop past depth 32, parent and pos still place every
# node, and the paths above come back right after the deep calls return;
# the walk keeps one frame per open call.
irt-trace -o deep.fb testdata/ir/deep.ir deep
irt-export --jsonl deep.fb | awk '
  NR <= 3 || NR == 171 || NR == 190 || (/"depth":32,/ && /"kind":"Return"/) || /"depth":33,"parent":[0-9]*,"pos":1,/ && ++n == 1 { print }
  { last = $0 }
  END { print last; print NR " lines" }'
