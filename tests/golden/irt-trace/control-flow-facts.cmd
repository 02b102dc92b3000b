# irt-trace records each function's control-flow facts (format 1.1 and
# later; flatc leaves out format_minor 0): geom
# has 2 blocks; block 1 holds `br 2 unless %5` (taken when %5 is false,
# flags 1) and a return, block 2 a return
irt-trace -o g.fb testdata/ir/geom.ir geom 1 0.5
flatc --json --strict-json --size-prefixed --raw-binary -o . "$IRT_SOURCE/schema/irtrace.fbs" -- g.fb
jq -c '{format_major, format_minor, functions: [.functions[] | {blocks, branches}]}' g.json
# a block that ends without an unconditional branch falls through: that is
# its last branch (block 1: `br 3 unless %3` at &1, the fall-through to 2 at &2)
printf 'function ft\n1: (%%1, %%2)\n  %%3 = %%2 < 0\n  br 3 unless %%3\n2:\n  return 1\n3:\n  return 2\nend\n' > ft.ir
irt-trace -o ft.fb ft.ir ft 1
flatc --json --strict-json --size-prefixed --raw-binary -o . "$IRT_SOURCE/schema/irtrace.fbs" -- ft.fb
jq -c '.functions[] | {blocks, branches}' ft.json
