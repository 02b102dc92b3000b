# Tuples are values with getindex and length; derivatives pass through
# them item by item, in reverse and forward mode and in the emitted
# backward pass, a tuple nested in a tuple too
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
irt-grad --emit-trace t.fb | irt-print --levels 1 -
sed 's/%4 = Main.tuple(%2, %3)/%8 = Main.tuple(%2, %3)\n  %4 = Main.tuple(%8, %3)\n  %9 = Main.getindex(%4, 1)/; s/getindex(%4, 2)/getindex(%9, 2)/' t.ir > n.ir
irt-trace -o n.fb n.ir t 2.0 3.0
irt-grad n.fb
irt-grad --emit-trace n.fb | irt-print --levels 1 -
