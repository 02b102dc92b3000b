# Long work draws a progress line on a terminal (stderr): the nodes done,
# their rate and the part done. IRT_PROGRESS_DELAY_MS=0 draws it at the first
# chunk instead of after a second; the line is erased when the work ends.
# down(20000) has 3 chunks, so the first line counts part of the trace.
T="python3 $IRT_SOURCE/tests/golden/onterminal.py --stderr --progress --"
irt-trace -o deep.fb testdata/ir/deep.ir down 20000
irt-trace -o h.fb testdata/ir/h.ir h 2.0 2
export IRT_PROGRESS_DELAY_MS=0
$T irt-trace -o deep2.fb testdata/ir/deep.ir down 20000
$T irt-check -o check.txt deep.fb
$T irt-slice -b @ -t -o slice.fb deep.fb
$T irt-diff --stat deep.fb deep2.fb
$T irt-replay --set @2=3.0 -o replay.fb h.fb
$T irt-grad h.fb
$T irt-export --speedscope --max-depth 30000 -o profile.json deep.fb
# A message erases the line first, so that it starts a line of its own.
$T irt-slice -v -b @19 -o slice.fb h.fb
# Text written to the same terminal stops the line (the summary comes after it).
python3 $IRT_SOURCE/tests/golden/onterminal.py --stdout --stderr --progress -- irt-check deep.fb
echo "--- no line with --no-progress, -q, TERM=dumb or stderr not a terminal:"
$T irt-check --no-progress -o check.txt deep.fb
$T irt-trace -q -o deep2.fb testdata/ir/deep.ir down 20000
TERM=dumb $T irt-diff deep.fb deep2.fb
irt-slice -b @ -t -o slice.fb deep.fb 2>stderr.txt
echo "stderr not a terminal: $(wc -c < stderr.txt) bytes"
