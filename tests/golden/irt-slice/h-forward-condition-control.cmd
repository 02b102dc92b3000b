# forward from the last loop test with control: the exit branch and the return it decided
irt-trace testdata/ir/h.ir h 2.0 2 -o h.fb
irt-slice -F @24 --control --list h.fb
irt-slice -F @24 --control h.fb | irt-print
