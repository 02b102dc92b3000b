# irt-grad, irt-replay and irt-slice --control on the C++ h(2.0, 3):
# dh/dx = sum of i x^(i-1) for i < 3 = 0 + 1 + 2 * 2.0 = 5.0 (analytic);
# x = 3.0 replays to 1 + 3 + 9 = 13.0; n = 2 makes the loop exit a
# round earlier, a divergence found from the recorded control-flow facts
# (the branch §2:&1 not taken before @25's goto §3); the tools agree on
# the C++ trace and on irt-trace's trace of the equivalent IR.
. golden/common.sh
record h 2.0 3
mkdir -p t && irt-trace -o t/h.irt testdata/ir/cpp/h.ir h 2.0 3
show 'irt-grad h.irt'
same 'irt-grad h.irt'
same 'irt-grad --forward h.irt'
show 'irt-replay --set @2=3.0 -o r.irt h.irt && irt-print -l 1 r.irt'
same 'irt-replay --set @2=3.0 -o r.irt h.irt && irt-print --no-meta r.irt'
show 'irt-replay --set @3=2 -o r.irt h.irt'
same 'irt-replay --set @3=2 -o r.irt h.irt'
show 'irt-slice --control --backward @33 --list h.irt'
same 'irt-slice --control --backward @33 --list h.irt'
same 'irt-slice --control --forward @3 --list h.irt'
same 'irt-dot h.irt'
