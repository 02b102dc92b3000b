# outer(0) failed when recorded (division by zero); at 5 it would not fail
irt-trace -o e.fb testdata/ir/error.ir outer 0 2> /dev/null
irt-replay --set @2=5 -o out.fb e.fb; echo "exit $?"
