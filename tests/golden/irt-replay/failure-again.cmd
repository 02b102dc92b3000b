# div(6, 0) failed when recorded; at a divisor of 0 again, with a dividend
# of 7, it fails again: the failure is replayed, its message and the
# trace's error updated
cat > s.ir <<'IR'
function s
1: (%1, %2, %3)
  %4 = %3 - 1
  %5 = Main.div(%2, %4)
  return %5
end
IR
irt-trace -o a.fb s.ir s 6 1 2> /dev/null
irt-replay --set @2=7 -o b.fb a.fb; echo "exit $?"
irt-print b.fb
irt-print --json b.fb | jq -c .meta.error
