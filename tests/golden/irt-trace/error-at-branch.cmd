# A run that fails at a branch: the Error node is at the branch's position
# (§b:&k), in irt-print, in its JSON and in an irt-slice listing.
cat > b.ir <<'IR'
function b
1: (%1, %2)
  %3 = %2 * 2.0
  br 2 unless %3
  return %3
2:
  return %2
end
IR
irt-trace -o b.fb b.ir b 1.5; echo "irt-trace exit $?"
irt-print b.fb
irt-print --json b.fb | jq -c '.root.children[-1] | {location, branch, op}'
irt-slice --list -b @4 b.fb
