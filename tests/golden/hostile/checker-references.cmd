# One checker: a reference that irt-check refuses is refused by every tool with
# the same message (exit 1), none crashes. h(2.0, 3) and down(2), each edited
# in one reference (make_bad_traces --set-ref FILE NODE K DISTANCE OUT, which
# edits format 1's reference column in place: the traces are converted to
# format 1.1 first; tests/packed_test.cc refuses the same references packed).
source golden/every-tool.sh
irt-trace testdata/ir/h.ir h 2.0 3 | irt-convert --format 1 -o h.fb
irt-trace testdata/ir/deep.ir down 2 | irt-convert --format 1 -o d.fb
echo "== the jump @5's only reference 2^31 nodes back"
make_bad_traces --set-ref h.fb 5 1 0x80000000 bad.fb && every_tool bad.fb
echo "== @8 uses the root call's marker, which has no value"
make_bad_traces --set-ref h.fb 8 1 8 bad.fb && every_tool bad.fb
echo "== @8 uses the jump @5, which has no value"
make_bad_traces --set-ref h.fb 8 1 3 bad.fb && every_tool bad.fb
echo "== the block argument @6 names @4 instead of the jump that passed it"
make_bad_traces --set-ref h.fb 6 1 2 bad.fb && every_tool bad.fb
echo "== node 19 uses node 8, inside the call that closed at node 18"
make_bad_traces --set-ref d.fb 19 1 11 bad.fb && every_tool bad.fb
echo "== f(1.0) whose return (in chunk 1) closes node 2 of chunk 0, not the root call"
make_bad_traces return-closes-wrong-call bad.fb && every_tool bad.fb
