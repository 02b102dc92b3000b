# the backward pass of h at (2.4, 4): the active primal recomputed (loop
# counters as constants), then adjoint nodes, each naming its primal node
irt-trace testdata/ir/h.ir h 2.4 4 | irt-grad --emit-trace -o gh.fb
irt-print gh.fb
irt-check gh.fb
irt-print --json --levels 1 gh.fb | jq -c ".meta"
