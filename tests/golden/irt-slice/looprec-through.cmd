# a loop inside a recursion: the result's data slice across all levels
irt-trace testdata/ir/looprec.ir looprec 2.0 2 -o lr.fb
irt-slice -b @30 --through-calls --list lr.fb
irt-slice -b @30 --through-calls lr.fb -o s.fb
irt-check s.fb | grep -v bytes
