# --force writes the trace to the terminal anyway (its first bytes: the size
# prefix, the root offset and the "IRTC" identifier); text output never needs it.
T="python3 $IRT_SOURCE/tests/golden/onterminal.py --stdout --bytes --"
irt-trace -o h.fb testdata/ir/h.ir h 2.0 2
$T irt-slice --force -b @19 h.fb
$T irt-trace -f testdata/ir/h.ir h 2.0 2
$T irt-slice --list -b @19 h.fb
$T irt-stats h.fb
$T irt-dot --levels 1 h.fb
