# W2 (rosenbrock) at N = 8: the backward pass returns the gradient g(x); its
# forward mode along v (forward over reverse) and its reverse mode seeded
# with v (reverse over reverse) both give H v, checked against central
# differences of the gradient, (g(x + εv) - g(x - εv)) / 2ε
cat > hv.py <<'PY'
import json, math, struct, subprocess, sys
def npy(path, values):
    h = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    h += " " * (63 - (len(h) + 10) % 64) + "\n"
    open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode()
                           + struct.pack("<%dd" % len(values), *values))
def run(*cmd):
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
ir = sys.argv[1]
n = 8
x = [0.5 + 0.1 * math.sin(3 * i) for i in range(n)]
v = [math.cos(1.7 * i + 0.3) for i in range(n)]
def grad(xs, name):
    npy(name + ".npy", xs)
    subprocess.run(["irt-trace", ir, "rosen", "@" + name + ".npy", str(n), "-o", name + ".fb"], check=True)
    return run("irt-grad", "--json", name + ".fb")["derivatives"][0]["derivative"]["data"]
g = grad(x, "x")
npy("v.npy", v)
subprocess.run("irt-grad --emit-trace x.fb -o g.fb", shell=True, check=True)
emitted = run("irt-print", "--json", "--levels", "1", "g.fb")["root"]["value"]["data"]
print("emitted trace returns the gradient:", emitted == g)
fwd = run("irt-grad", "--mode", "forward", "--tangent", "@2=@v.npy", "--json", "g.fb")["derivative"]["data"]
rev = run("irt-grad", "--seed", "@v.npy", "--json", "--wrt", "@2", "g.fb")["derivatives"][0]["derivative"]["data"]
eps = 1e-6
gp = grad([a + eps * b for a, b in zip(x, v)], "xp")
gm = grad([a - eps * b for a, b in zip(x, v)], "xm")
fd = [(p - m) / (2 * eps) for p, m in zip(gp, gm)]
scale = max(abs(f) for f in fd)
for name, hv in (("forward over reverse", fwd), ("reverse over reverse", rev)):
    err = max(abs(a - b) for a, b in zip(hv, fd)) / scale
    print(f"{name}: H v agrees with the finite differences: {err < 1e-6}")
print("forward over reverse = reverse over reverse:",
      max(abs(a - b) for a, b in zip(fwd, rev)) <= 1e-12 * scale)
PY
python3 hv.py "$IRT_SOURCE/bench/ir/w2_rosenbrock.ir"
