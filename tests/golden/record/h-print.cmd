# The seed's h loop in C++ (a while loop with IRT_WHILE(i < n, i, r)):
# jumps with the loop-carried block arguments, the condition that decided
# each branch, and the same nodes, blocks and SSA ids as irt-trace's trace
# of the equivalent IR (testdata/ir/cpp/h.ir).
. golden/common.sh
record h 2.0 2
mkdir -p t && irt-trace -o t/h.irt testdata/ir/cpp/h.ir h 2.0 2
show 'irt-print --levels 2 h.irt'
show 'irt-check h.irt | grep -v ^bytes'
same 'irt-print --no-meta h.irt'
same 'irt-stats h.irt | grep -v -e ^producer -e ^bytes -e ^chunks'
irt-diff t/h.irt p/h.irt; echo "irt-diff: exit $?"
