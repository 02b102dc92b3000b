# -o into a FIFO (or a device such as /dev/null) must write into it, not
# rename a regular file over it.
make_bad_traces valid t.fb && mkfifo p
timeout 10 cat p > got.txt &
irt-print -o p t.fb
wait
test -p p && echo "p is still a fifo"
wc -l < got.txt
