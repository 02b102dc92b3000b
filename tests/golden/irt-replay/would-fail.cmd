# outer(1) runs; at 0 the integer division would fail
irt-trace -o e.fb testdata/ir/error.ir outer 1
irt-replay --set @2=0 -o out.fb e.fb; echo "exit $?"
irt-replay --prefix --set @2=0 e.fb | irt-print --partial
