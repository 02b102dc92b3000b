# h's return with control dependences: every loop test and branch that led there
irt-trace testdata/ir/h.ir h 2.0 2 -o h.fb
irt-slice -b @26 --control --list h.fb
