# A .npy argument of more than 32 dimensions is refused when it is read, as
# readers would refuse the trace it went into; 32 is fine.
python3 - <<'PY'
import struct
for n in (32, 33, 64):
    hdr = "{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }" % ", ".join(["1"] * n)
    hdr += " " * ((64 - (11 + len(hdr)) % 64) % 64) + "\n"
    with open("d%d.npy" % n, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<d", 2.5))
PY
cat > id.ir <<'IR'
function id
1: (%1, %2)
  return %2
end
IR
irt-trace id.ir id @d32.npy | irt-print | tail -1
irt-trace -o d33.fb id.ir id @d33.npy; echo "status $?"
irt-trace -o d64.fb id.ir id @d64.npy; echo "status $?"
