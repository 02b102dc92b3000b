"""What the bench scripts share: running a command with its time and peak
memory, one figure per line, and .npy inputs."""
import os
import pathlib
import struct
import subprocess
import sys
import time


def run(cmd, stdout=subprocess.DEVNULL, who="bench", ok=(0,)):
    """Runs cmd: (seconds, peak RSS in MiB, stderr); exits on failure (an
    exit status not in `ok`).

    The peak comes from /usr/bin/time, a small parent: a child forked from
    this Python process would count Python's own pages until it execs."""
    rss_file = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / f"{who}-rss-{os.getpid()}"
    t0 = time.perf_counter()
    p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", str(rss_file), *map(str, cmd)],
                         stdout=stdout, stderr=subprocess.PIPE)
    _, status, _ = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in ok:
        sys.exit(f"{who}: {' '.join(map(str, cmd))} failed ({code}): {err.strip()}")
    rss = float(rss_file.read_text().split()[-1]) / 1024.0
    rss_file.unlink()
    return dt, rss, err


def emit(workload, figure, value, unit):
    """One figure per line: WORKLOAD FIGURE VALUE UNIT."""
    if isinstance(value, float):
        value = f"{value:.6g}" if abs(value) < 1e6 else f"{value:.0f}"
    print(f"{workload} {figure} {value} {unit}", flush=True)


def write_npy_f64(path, values):
    """A Float64 vector as a .npy file."""
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    header = header + " " * (63 - (len(header) + 10) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%dd" % len(values), *values))
