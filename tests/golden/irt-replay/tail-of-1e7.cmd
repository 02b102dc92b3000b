# golden: release-only
# a 10^7-node loop: a change in the last 1% re-evaluates a small part of it
# and rebuilds two of its 153 chunks
irt-trace -o a.fb testdata/ir/loop.ir loop 0.999999
irt-replay -v --set @3/@9900010=0.5 -o b.fb a.fb
irt-diff --stat a.fb b.fb
