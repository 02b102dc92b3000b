# Tensors that forward mode, reverse mode or a rule file would make are
# checked before anything is allocated: at most 2^28 elements.
make_bad_traces matmul-huge mm.fb && wc -c < mm.fb
irt-grad --mode forward --tangent @2="2147483648×0 Float64[]" mm.fb; echo "status $?"
irt-trace -o f.fb testdata/ir/f.ir f 1.0
for body in "zeros(100000, 100000)" "fill(x, 1048575, 1048575)" "ones(100000, 1) + ones(1, 100000)"; do
  printf 'sin(x) -> y\n  dy = dx * cos(x)\n  dx = dy * cos(x) + sum(%s)\n' "$body" > big.rules
  irt-grad --rules big.rules f.fb; echo "status $?"
done
irt-replay --set @2="2147483647×0 Float64[]" mm.fb; echo "status $?"
