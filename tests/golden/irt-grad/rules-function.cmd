# a rule for a module function: its body is not entered (this rule is
# deliberately 10 times the truth, to show it is used)
cat > sq.rules <<EOF
sq(x) -> y
  dy = 10 * x * dx
  dx = 10 * x * dy
EOF
irt-trace testdata/ir/square.ir main 3.0 -o s.fb
irt-grad s.fb
irt-grad --rules sq.rules s.fb
irt-grad --rules sq.rules --mode forward --tangent @2=1.0 s.fb
irt-grad --rules sq.rules --emit-trace s.fb | irt-print
