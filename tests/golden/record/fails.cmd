# An exception thrown three calls deep (fails -> g1 -> g2, g2 throws when
# x * x > 1): irt-record-seed reports it and exits 1, and the trace is
# complete and valid: an Error node closes each open call, the innermost
# for the throw, the outer ones for the call statements that failed, and
# the trace metadata says status = "failed" with the exception's message.
# At x = -1.0 nothing throws: status = "ok".
# At x = -1.0 nothing throws.
. golden/common.sh
record fails 0.9
show 'irt-check fails.irt | grep -v ^bytes'
show 'irt-print fails.irt'
show 'irt-print --json fails.irt | jq -c .meta'
record fails -1.0
show 'irt-print -l 1 fails.irt'
show 'irt-print --json fails.irt | jq -c .meta'
