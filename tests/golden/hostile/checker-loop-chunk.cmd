# One checker, in a chunk where no call opens or closes (the middle of a
# long loop, which the checker reads with fewer records): the same
# references are refused as anywhere else. h(0.5, 20000) converted to
# format 1.1 (make_bad_traces --set-ref edits format 1's references) has
# three chunks; chunk 1 (nodes 65536-131071) holds only loop steps:
# @65545 goto §3, @65547 = @65543 + @65546, @65549 goto §2 (@65548,
# @65547), @65551 its block argument %6. Every tool that reads the whole
# trace refuses the first edit with the checker's message (every_tool's
# arguments would stop irt-dot and irt-replay before they read it).
irt-trace testdata/ir/h.ir h 0.5 20000 | irt-convert --format 1 -o h.fb
irt-check h.fb | head -3
echo "== @65547 uses the jump @65545, which has no value"
make_bad_traces --set-ref h.fb 65547 1 2 bad.fb
for t in "irt-check" "irt-print" "irt-stats" "irt-dot --max-nodes 0" "irt-slice -b @" \
  "irt-grad" "irt-replay --set @2=0.25" "irt-export --jsonl" "irt-convert"; do
  $t bad.fb > /dev/null
  echo "$t: exit $?"
done
irt-diff h.fb bad.fb > /dev/null
echo "irt-diff: exit $?"
echo "== the block argument @65551 names @65547, not a jump"
make_bad_traces --set-ref h.fb 65551 1 4 bad.fb && irt-check bad.fb
echo "== the block argument @65551 names the jump @65541, not its call's last"
make_bad_traces --set-ref h.fb 65551 1 10 bad.fb && irt-check bad.fb
echo "== the block argument @65551 names @65535 in chunk 0, past the jump @65549"
make_bad_traces --set-ref h.fb 65551 1 16 bad.fb && irt-check bad.fb
echo "== @65547 uses a node before the first"
make_bad_traces --set-ref h.fb 65547 1 70000 bad.fb && irt-check bad.fb
