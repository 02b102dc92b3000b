# Control dependences come from the control-flow facts, which both producers
# record: the backward slice of @19 (%9 = %6 + %8 in the second iteration of
# the loop of h(2.0, 2)) keeps the branches taken (goto §3 at §2:&2) and the
# conditions that decided them (%7 = %5 < %3), the same on both traces.
. golden/common.sh
trace_both h 2.0 2
show 'irt-slice --control --list --backward @19 h.irt'
same 'irt-slice --control --list --backward @19 h.irt'
same 'irt-slice --list --backward @19 h.irt'
same 'irt-slice --control --list --forward @3 h.irt'
# The sliced trace carries the facts over: sliced again, it gives the same.
same 'irt-slice --control -o s.irt --backward @19 h.irt && irt-slice --control --list --backward @19 s.irt'
