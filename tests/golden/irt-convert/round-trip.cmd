# Format 2 to 1.1 and back: every tool reads the three alike (irt-diff finds
# nothing, irt-print and irt-grad print the same), and the sizes show what
# packing saves on a loop.
irt-trace -o w.fb testdata/ir/loop.ir powsum 0.999 20000
irt-convert --format 1 -v w.fb -o w1.fb
irt-convert -v w1.fb -o w2.fb
irt-check w1.fb | grep -E 'format|bytes'
irt-check w2.fb | grep -E 'format|bytes'
irt-diff w.fb w1.fb; echo "diff exit $?"
irt-diff w.fb w2.fb; echo "diff exit $?"
for f in w.fb w1.fb w2.fb; do irt-print $f | md5sum; irt-grad $f | md5sum; done
# through pipes, compressed on the way
irt-trace testdata/ir/geom.ir geom 1 0.5 | irt-convert --format 1 | irt-convert -o g.fb.zst
irt-check g.fb.zst | grep format
# a trace already in the format asked for is copied byte for byte
irt-convert w.fb -o same.fb && cmp w.fb same.fb && echo identical
