# One checker: each rule of schema/README.md §8 that a variant of f(1.0)
# breaks is refused by every tool with irt-check's message (exit 1).
source golden/every-tool.sh
for v in marker-with-value return-no-value error-with-value flags-2 f32-high-bits \
  bool-tensor-2 meta-dup-key minor-newer-vkind no-producer; do
  echo "== $v"
  make_bad_traces $v bad.fb && every_tool bad.fb
done
