# --rules replaces a shipped rule; --no-default-rules starts from nothing
cat > sin.rules <<EOF
# deliberately wrong: sin's derivative doubled
sin(x) -> y
  dy = 2 * cos(x) * dx
  dx = 2 * dy * cos(x)
EOF
irt-trace testdata/ir/f.ir f 1.0 -o f.fb
irt-grad --rules sin.rules f.fb; echo "exit $?"
irt-grad --no-default-rules --rules sin.rules f.fb; echo "exit $?"
