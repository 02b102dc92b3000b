# a return that closes the wrong call
make_bad_traces return-closes-wrong-call t.fb && irt-slice -b @3 --through-calls --list t.fb
