# The test producer's trace of looprec(2.0, 3) in chunks of 8 nodes, so that
# the nested calls open in later chunks: the writer stores the control-flow
# facts in every chunk that opens a call, and the slices, replays and
# derivatives are those of irt-trace's one-chunk trace.
. golden/common.sh
trace_both looprec 2.0 3
"$P" -o p/looprec.irt --chunk-nodes 8 looprec 2.0 3
show 'irt-check looprec.irt | grep -e ^chunks -e ^calls -e ^ok'
same 'irt-print looprec.irt'
same 'irt-slice --control --through-calls --list --backward @36/@28/@12 looprec.irt'
show 'irt-replay --set @36/@28/@3=2 -o r.irt looprec.irt'
same 'irt-replay --set @36/@28/@3=2 -o r.irt looprec.irt'
same 'irt-replay --set @36/@28/@4=true -o r.irt looprec.irt'
show 'irt-replay --set @36/@28/@9=false -o r.irt looprec.irt'
same 'irt-replay --set @36/@28/@9=false -o r.irt looprec.irt'
same 'irt-replay --set @2=3.0 -o r.irt looprec.irt && irt-print r.irt'
same 'irt-grad looprec.irt'
