# a rule that fails while it is applied is a data error (exit 1), not a usage
# error, and the message names the trace file and the node
cat > bad.rules <<EOF2
sin(x) -> y
  dx = matmul(dy, x)
EOF2
irt-trace testdata/ir/f.ir f 1.0 -o f.fb
irt-grad --rules bad.rules f.fb
echo "exit $?"
irt-grad --mode forward --tangent @2=1 --rules bad.rules f.fb
echo "exit $?"
irt-grad --rules bad.rules --emit-trace -o g.fb f.fb
echo "exit $?"
ls g.fb* 2>/dev/null || echo "no g.fb"
