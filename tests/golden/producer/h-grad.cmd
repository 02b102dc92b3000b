# irt-grad gives the same derivatives of h(2.0, 2) = 1 + x on the test
# producer's trace as on irt-trace's, in reverse and forward mode.
. golden/common.sh
trace_both h 2.0 2
show 'irt-grad h.irt'
same 'irt-grad h.irt'
same 'irt-grad --json h.irt'
same 'irt-grad --mode forward --tangent @2=1.0 h.irt'
same 'irt-grad --annotate -o a.irt h.irt && irt-print a.irt'
