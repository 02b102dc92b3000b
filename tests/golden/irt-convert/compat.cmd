# A format 1.0 trace converted to format 2 keeps its control-flow facts,
# which a 1.0 reader parses from the IR text: --control slices and the
# replay's divergence check give what they give on the 1.0 file.
irt-convert -o g2.fb testdata/compat/v1/geom.fb
irt-check g2.fb | grep format
irt-print testdata/compat/v1/geom.fb > a.txt
irt-print g2.fb > b.txt
cmp a.txt b.txt && echo "same listing"
for f in testdata/compat/v1/geom.fb g2.fb; do
  irt-slice -b @8/@8/@6 -t -c --list $f | md5sum
  irt-replay --set @8/@8/@4=0.9 -o /dev/null $f; echo "replay exit $?"
done
