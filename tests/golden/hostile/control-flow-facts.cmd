# Control-flow facts (format 1.1) that break a rule of schema/README.md §7.1
# are refused by every tool with irt-check's message (exit 1), naming the
# chunk, the function and the branch.
source golden/every-tool.sh
for v in facts-block-range facts-position facts-unsorted facts-target facts-flags \
  facts-return-condition facts-condition-unconditional facts-no-blocks facts-many-blocks; do
  echo "== $v"
  make_bad_traces $v bad.fb && every_tool bad.fb
done
