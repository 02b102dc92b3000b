# irt-replay recomputes the operations the standard set added from their
# names alone: replaying with a new argument gives the trace a fresh run
# records (irt-diff finds no difference)
cat > r.ir <<'IR'
function g
1: (%1, %2, %3)
  %4 = Main.min(%2, %3)
  %5 = Main.maximum(%4, 2)
  %6 = Main.slice(%2, 2, 1, 3, 2)
  %7 = Main.cat(2, %5, %6)
  %8 = Main.atan2(%7, 2.0)
  %9 = Main.fld(%8, 0.25)
  %10 = Main.lgamma(%8)
  %11 = %10 * %9
  %12 = Main.sum(%11)
  return %12
end
IR
irt-trace -o a.fb r.ir g '[1.0 -2.0 3.0; 4.0 5.0 -6.0]' '[0.5 0.5 0.5; 0.5 0.5 0.5]'
irt-replay --set @3='[0.25 1.5 -0.5; 2.0 0.5 0.75]' -o b.fb a.fb; echo "replay exit $?"
irt-trace -o c.fb r.ir g '[1.0 -2.0 3.0; 4.0 5.0 -6.0]' '[0.25 1.5 -0.5; 2.0 0.5 0.75]'
irt-diff --ignore-meta args b.fb c.fb; echo "diff exit $?"
irt-print b.fb | tail -4
