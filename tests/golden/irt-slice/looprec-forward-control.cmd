# forward from d with control: d decides the first test, so everything after it
irt-trace testdata/ir/looprec.ir looprec 2.0 2 -o lr.fb
irt-slice -v -F @3 --through-calls --control lr.fb -o s.fb
irt-check s.fb | grep -v bytes
irt-slice -F @3 --list lr.fb
