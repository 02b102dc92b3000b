# a malformed rule file: file, line and column
cat > bad.rules <<EOF
# a rule with a missing parenthesis
sin(x) -> y
  dy = cos(x * dx
EOF
irt-trace testdata/ir/f.ir f 1.0 -o f.fb
irt-grad --rules bad.rules f.fb; echo "exit $?"
printf "sin(x) -> y\n  dy = cos(x) * dx\n  dz = 1\n" > bad2.rules
irt-grad --rules bad2.rules f.fb; echo "exit $?"
irt-grad --rules missing.rules f.fb; echo "exit $?"
