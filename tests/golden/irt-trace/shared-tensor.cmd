# A tensor that every call receives (bench/ir/gmm_loops.ir hands the data X,
# 1000 x 2, to 3 calls per point) is written once per chunk: the trace grows
# with the points visited, not with X's size times the calls. Format 1.1
# shares it the same way; before, each call's argument node stored a copy
# (48 MB for all 1000 points).
python3 - <<'PY'
import struct
hdr = "{'descr': '<f8', 'fortran_order': False, 'shape': (1000, 2), }"
hdr += " " * ((64 - (11 + len(hdr)) % 64) % 64) + "\n"
with open("x.npy", "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
    for i in range(2000):
        f.write(struct.pack("<d", ((i * 37) % 101) / 50.0 - 1.0))
PY
for n in 10 100 1000; do
  irt-trace -o g$n.fb "$IRT_SOURCE/bench/ir/gmm_loops.ir" gmm @x.npy 0.3 -0.2 $n
  irt-convert --format 1 g$n.fb -o g$n-v1.fb
  echo "points $n: $(irt-check g$n.fb | grep nodes) ; bytes $(stat -c %s g$n.fb) (format 2), $(stat -c %s g$n-v1.fb) (format 1.1)"
done
irt-grad g10.fb | sed -n '3,4p'
