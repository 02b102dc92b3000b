# Inputs that are not traces are refused on their first bad chunk, as the
# bytes arrive: nothing is copied or buffered whole first, whatever the input
# would expand to.
make_bad_traces no-final-chunk nf.fb
irt-print /dev/zero; echo "status $?"
cat /dev/zero | irt-print -; echo "status ${PIPESTATUS[1]}"
# 100 MB of zeros in a 3 KB zstd frame
head -c 100M /dev/zero | zstd -q -c > zeros.zst
irt-print zeros.zst; echo "status $?"
irt-check zeros.zst; echo "status $?"
# a good first chunk, then zeros: refused at the second chunk
(cat nf.fb; head -c 50M /dev/zero) | zstd -q -c > nz.zst
irt-print nz.zst; echo "status $?"
irt-stats nz.zst; echo "status $?"
# a second chunk that claims 2^31-68 bytes: judged by its first bytes
python3 -c "
import struct, sys
sys.stdout.buffer.write(struct.pack('<II', 2**31 - 68, 2**31 - 100) + b'IRTC')" > claim.bin
(cat nf.fb claim.bin; head -c 100M /dev/zero) | zstd -q -c > claim.zst
irt-check claim.zst; echo "status $?"
irt-stats claim.zst; echo "status $?"
irt-print claim.zst; echo "status $?"
(cat nf.fb claim.bin; cat /dev/zero) | irt-check -; echo "status ${PIPESTATUS[1]}"
(cat nf.fb claim.bin; cat /dev/zero) | irt-print -; echo "status ${PIPESTATUS[1]}"
# a plain file whose first chunk claims more than the file holds
python3 -c "
import struct
b = bytearray(open('nf.fb', 'rb').read()); b[0:4] = struct.pack('<I', 2**31 - 68)
open('big.fb', 'wb').write(b)"
irt-check big.fb; echo "status $?"
irt-print big.fb; echo "status $?"
