# A compressed trace whose writer died (cut inside the zstd stream) keeps its
# complete chunks: --partial prints them, irt-check checks them and names the
# chunk that is cut.
irt-trace -o w.fb.zst testdata/ir/loop.ir powsum 0.999 100000
irt-stats w.fb.zst | grep chunks
n=$(stat -c %s w.fb.zst)
head -c $((n * 2 / 3)) w.fb.zst > cut.zst
irt-print --partial --levels 1 cut.zst
irt-print --partial cut.zst | tail -1
cat cut.zst | irt-print --partial - | tail -1
irt-check cut.zst; echo "status $?"
irt-print cut.zst; echo "status $?"
# cut inside the first chunk: nothing complete to show
head -c 100 w.fb.zst > tiny.zst
irt-print --partial tiny.zst; echo "status $?"
