# an unfinished trace (the writer died inside its second chunk) is refused unless --partial
irt-trace testdata/ir/loop.ir powsum 0.5 20000 > whole.fb
n=$(stat -c %s whole.fb)
head -c $((n * 2 / 3)) whole.fb > cut.fb
irt-print --levels 1 cut.fb
echo "exit $?"
irt-print --partial --levels 2 cut.fb > out.txt
echo "exit $?"
head -4 out.txt
tail -2 out.txt
