# irt-replay on the test producer's trace of h(2.0, 2) and on irt-trace's:
# x = 3.0 re-evaluates the loop to 4.0; n = 1 makes the loop exit earlier, so
# at @17 (goto §3, §2:&2) the branch before it, §2:&1 (br 4 unless %7), not
# taken in the run, would be taken now: a divergence found from the facts
# alone; n = 3 makes the exit branch taken at @25 not taken any more.
. golden/common.sh
trace_both h 2.0 2
show 'irt-replay --set @2=3.0 -o r.irt h.irt && irt-print r.irt'
same 'irt-replay --set @2=3.0 -o r.irt h.irt && irt-print r.irt'
show 'irt-replay --set @3=1 -o r.irt h.irt'
same 'irt-replay --set @3=1 -o r.irt h.irt'
same 'irt-replay --set @3=1 --prefix -o r.irt h.irt; irt-print --partial r.irt'
show 'irt-replay --set @3=3 -o r.irt h.irt'
same 'irt-replay --set @3=3 -o r.irt h.irt'
