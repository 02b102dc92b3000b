# Every tool that writes a trace refuses a terminal as its standard output,
# writes nothing there and exits 2; -o FILE, a pipe or --force are the ways out.
T="python3 $IRT_SOURCE/tests/golden/onterminal.py --stdout --"
irt-trace -o h.fb testdata/ir/h.ir h 2.0 2
$T irt-trace testdata/ir/h.ir h 2.0 2
$T irt-slice -b @19 h.fb
$T irt-convert h.fb
$T irt-replay --set @2=3.0 h.fb
$T irt-grad --emit-trace h.fb
$T irt-grad --annotate h.fb
