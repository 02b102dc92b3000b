# starting inside the recursion: the slice leaves the call through its arguments
irt-trace testdata/ir/looprec.ir looprec 2.0 2 -o lr.fb
irt-slice -b @28/@21 --through-calls --list lr.fb
irt-slice -b @28/@21 --list lr.fb
