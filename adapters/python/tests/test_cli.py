"""python3 -m irtrace trace: what the golden cases (tests/golden/python/cli-*)
do not show: -o replaces a file only when a trace is made, a FIFO is
written in place, a reader that goes away is not an error message."""
import os
import subprocess
import sys
import threading

import irtrace

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = os.path.join(HERE, "..", "..", "..", "tests", "golden", "python", "seed.py")


def run(*args, **kw):
    return subprocess.run([sys.executable, "-m", "irtrace", "trace", *args], capture_output=True,
                          **kw)


def test_output_replaced_only_by_a_trace(tmp_path):
    out = tmp_path / "t.fb"
    out.write_bytes(b"old")
    for args, status in ((("unsupported", "1.0"), 1), (("f",), 2), (("f", "[1.0,"), 2)):
        r = run("-o", str(out), SEED, *args)
        assert r.returncode == status, r.stderr
        assert out.read_bytes() == b"old"
    r = run("-o", str(out), SEED, "fails", "0.9")
    assert r.returncode == 1 and b"ValueError: math domain error" in r.stderr
    t = irtrace.load(out)
    assert t.metadata["status"] == "failed"
    assert sorted(os.listdir(tmp_path)) == ["t.fb"]  # no temporary file left
    r = run("-o", str(out), SEED, "f", "2.0")
    assert r.returncode == 0 and r.stderr == b""
    assert irtrace.load(out).root.value == irtrace.load(out).root.children[-1].value


def test_fifo_written_in_place(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    r = run("-o", str(fifo), SEED, "h", "2.0", "3")
    reader.join(timeout=60)
    assert r.returncode == 0, r.stderr
    t = irtrace._native.Trace.from_bytes(got[0], "fifo")
    assert t.complete and t.root.children[-1].value == 7.0


def test_reader_that_goes_away(tmp_path):
    # The trace (about 500 kB) outgrows the pipe: writing it meets EPIPE.
    p = subprocess.run(f"'{sys.executable}' -m irtrace trace '{SEED}' h 1.0 3000 | head -c 4",
                       shell=True, capture_output=True)
    assert len(p.stdout) == 4 and p.stderr == b""


def test_defaults_and_arity(tmp_path):
    m = tmp_path / "m.py"
    m.write_text("def g(x, y=2.0):\n    return x * y\n\n\ndef k(x, *, scale):\n    return x\n")
    out = tmp_path / "g.fb"
    r = run("-o", str(out), str(m), "g", "3.0")
    assert r.returncode == 0, r.stderr
    assert irtrace.load(out).root.value == 6.0
    r = run("-o", str(out), str(m), "g", "3.0", "0.5")
    assert r.returncode == 0 and irtrace.load(out).root.value == 1.5
    r = run(str(m), "g")
    assert r.returncode == 2
    assert r.stderr.splitlines()[0] == b"irtrace: error: function 'g' takes 1 to 2 arguments, 0 given"
    r = run(str(m), "k", "1.0")
    assert r.returncode == 2 and b"keyword-only" in r.stderr
