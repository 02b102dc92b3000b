# -o FILE writes the graph atomically (nothing on stdout); a file that cannot
# be written is an error that names it, and leaves no partial file behind.
irt-trace -o f.fb testdata/ir/f.ir f 1.0
irt-dot -o f.dot f.fb
head -2 f.dot
irt-dot -o no/such/dir/f.dot f.fb; echo "status $?"
ls
