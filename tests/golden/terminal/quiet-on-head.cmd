# A reader that goes away early stops the tools quietly: no message on stderr.
# (down(20000): deep enough that every tool writes far more than a pipe holds.)
irt-trace -o deep.fb testdata/ir/deep.ir down 20000
# (Whether a tool ends by SIGPIPE or by EPIPE depends on timing: statuses are not compared.)
set +o pipefail
irt-slice --list -b @ -t deep.fb | head -2
irt-slice -b @ -t deep.fb | head -c 100 | wc -c
irt-stats --chunks deep.fb | head -1
irt-dot --max-nodes 0 --levels 300 deep.fb | head -1
irt-print --levels 5000 deep.fb | head -1
irt-export --jsonl deep.fb | head -1
# With SIGPIPE ignored (as some shells and process managers leave it), the
# write fails with EPIPE instead: still no message, and exit status 1.
(
  trap '' PIPE
  irt-print --levels 5000 deep.fb | head -c 10 >/dev/null; echo "irt-print ${PIPESTATUS[0]}"
  irt-print --json deep.fb | head -c 10 >/dev/null; echo "irt-print --json ${PIPESTATUS[0]}"
  irt-slice --list -b @ -t deep.fb | head -c 10 >/dev/null; echo "irt-slice ${PIPESTATUS[0]}"
  irt-dot --max-nodes 0 --levels 300 deep.fb | head -c 10 >/dev/null; echo "irt-dot ${PIPESTATUS[0]}"
  irt-slice -b @ -t deep.fb | head -c 10 >/dev/null; echo "irt-slice (trace) ${PIPESTATUS[0]}"
  irt-export --jsonl deep.fb | head -c 10 >/dev/null; echo "irt-export ${PIPESTATUS[0]}"
)
