# sqrt of -0.5 failed when recorded; at -3.0 it fails again, with another
# message: the failure is replayed, its message and the trace's error updated
cat > s.ir <<'IR'
function s
1: (%1, %2)
  %3 = %2 - 1.0
  %4 = Main.sqrt(%3)
  return %4
end
IR
irt-trace -o a.fb s.ir s 0.5 2> /dev/null
irt-replay --set @2=-2.0 -o b.fb a.fb; echo "exit $?"
irt-print b.fb
irt-print --json b.fb | jq -c .meta.error
