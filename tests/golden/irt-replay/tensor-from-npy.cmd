# W2 (rosenbrock) at N = 6000 replayed with a new x given as a .npy file
# (--set @2=@FILE.npy, as irt-trace takes arguments) is W2 traced afresh at
# that x; each getindex reads the new x, decoded once for all of them
python3 - <<'PY'
import struct
def npy(path, values):
    h = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    h += " " * (63 - (len(h) + 10) % 64) + "\n"
    open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode()
                           + struct.pack("<%dd" % len(values), *values))
x = [0.5 + 0.001 * (k % 100) for k in range(6000)]
npy("x.npy", x)
x[3000] += 0.25
npy("x2.npy", x)
PY
irt-trace -o w2.fb "$IRT_SOURCE/bench/ir/w2_rosenbrock.ir" rosen @x.npy 6000
irt-replay -v --set @2=@x2.npy -o r.fb w2.fb
irt-trace -o fresh.fb "$IRT_SOURCE/bench/ir/w2_rosenbrock.ir" rosen @x2.npy 6000
irt-diff --stat --ignore-meta args r.fb fresh.fb; echo "exit $?"
irt-replay --set @2=@missing.npy -o r.fb w2.fb; echo "exit $?"
