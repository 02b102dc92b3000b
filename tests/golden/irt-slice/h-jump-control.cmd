# slicing a jump needs --control: what decided the loop's exit
irt-trace testdata/ir/h.ir h 2.0 2 -o h.fb
irt-slice -b @25 --control --list h.fb
