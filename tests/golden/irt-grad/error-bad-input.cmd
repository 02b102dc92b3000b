# unreadable input: a missing file, not a trace, a failed run
irt-grad missing.fb
echo "not a trace at all" > junk.fb
irt-grad junk.fb
irt-trace testdata/ir/error.ir outer 0 -o e.fb
irt-grad e.fb
irt-trace testdata/ir/h.ir h 2.0 2 | irt-grad --wrt @9
