# A damaged compressed trace: the error says what and where, exit 1
irt-trace -o h.fb.zst testdata/ir/h.ir h 2.0 2
head -c 300 h.fb.zst > cut.zst
irt-print cut.zst; echo "status $?"
irt-check - < cut.zst; echo "status $?"
python3 -c "
import sys; b = bytearray(open('h.fb.zst', 'rb').read()); b[len(b) // 2] ^= 0xff
open('bad.zst', 'wb').write(b)"
irt-print bad.zst; echo "status $?"
irt-stats bad.zst; echo "status $?"
# compressed data that is not a trace, and an empty compressed file
echo "hello" | zstd -q -c > text.zst
irt-print text.zst; echo "status $?"
printf '' | zstd -q -c > empty.zst
irt-check empty.zst; echo "status $?"
irt-print empty.zst; echo "status $?"
# a compressed trace cut between frames is a truncated trace
irt-trace -o h.fb testdata/ir/h.ir h 2.0 2
head -c 1000 h.fb | zstd -q -c > half.zst
irt-print half.zst; echo "status $?"
