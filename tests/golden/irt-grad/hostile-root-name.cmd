# a root function whose name holds a newline and a forged error line: the name
# is escaped in irt-grad's output and in its errors, never shown raw
make_bad_traces root-forge rf.fb
irt-grad rf.fb
irt-grad --wrt @1 rf.fb
echo "exit $?"
