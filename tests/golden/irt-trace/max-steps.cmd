# A program that never ends still ends its trace with --max-steps N: after N
# statements and branches it fails like any runtime error (exit 1), Error
# nodes close the open calls, and the trace is complete and valid.
cat > spin.ir <<'IR'
function spin
1: (%1, %2)
  %3 = Main.loop(%2)
  return %3
end

function loop
1: (%1, %2)
  br 2 (%2)
2: (%3)
  %4 = %3 + 1
  br 2 (%4)
end
IR
irt-trace --max-steps 12 -o s.fb spin.ir spin 0; echo "irt-trace exit $?"
irt-check s.fb | tail -1
irt-print s.fb
irt-print --json s.fb | jq -c '.meta'
# a limit the program stays within changes nothing but the metadata
irt-trace --max-steps 100 testdata/ir/h.ir h 2.0 2 | irt-print --levels 1 --no-meta
