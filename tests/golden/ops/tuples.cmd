# Tuples are values with getindex and length; derivatives do not pass
# through them yet, and differentiating through one is an error naming the
# node, never a silent zero
cat > t.ir <<'IR'
function t
1: (%1, %2, %3)
  %4 = Main.tuple(%2, %3)
  %5 = Main.getindex(%4, 2)
  %6 = Main.length(%4)
  %7 = %5 * %2
  return %7
end
IR
irt-trace -o t.fb t.ir t 2.0 3.0
irt-print t.fb
irt-grad t.fb; echo "exit $?"
irt-grad --mode forward --tangent @3=1.0 t.fb; echo "exit $?"
