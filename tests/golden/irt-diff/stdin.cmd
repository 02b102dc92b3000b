# either trace may come from a pipe
irt-trace -o h2.fb testdata/ir/h.ir h 2.0 2
irt-trace testdata/ir/h.ir h 2.0 2 | irt-diff h2.fb -; echo "exit $?"
irt-trace testdata/ir/h.ir h 3.0 2 | irt-diff --stat - h2.fb | head -2
