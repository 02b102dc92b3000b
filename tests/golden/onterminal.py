#!/usr/bin/env python3
"""Runs a command with some of its standard streams on a pseudo-terminal.

Usage: onterminal.py [--stdin] [--stdout] [--stderr] [--bytes] [--progress] -- COMMAND [ARG...]

Each stream named is connected to a terminal of its own (the others are
inherited); what the command writes to a terminal is then printed as
"tty stdout: LINE" or "tty stderr: LINE", with the escape character shown
as "\\e" so that colour is visible in a golden file, or, with --bytes, as
"tty stdout: N bytes, starting XXXXXXXX" (the first 12 bytes, hex). A last
line gives the exit status. The golden cases use it to check what the
tools do when a user sits at the other end: refuse binary output, read no
trace from the keyboard, colour diagnostics unless NO_COLOR is set.

With --progress, stderr is shown for the tools' progress line: a carriage
return is shown as "\\r" (lines are split at newlines only), a run of
redraws as its first one (how many follow depends on the machine's speed)
and each rate ("4.2M nodes/s") as "N nodes/s".
"""
import argparse
import os
import pty
import re
import select
import subprocess
import sys
import termios
import tty


def main():
    ap = argparse.ArgumentParser()
    for s in ("stdin", "stdout", "stderr"):
        ap.add_argument("--" + s, action="store_true")
    ap.add_argument("--bytes", action="store_true")
    ap.add_argument("--progress", action="store_true")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("no command")

    masters, slaves = {}, {}
    for s in ("stdin", "stdout", "stderr"):
        if getattr(args, s):
            m, sl = pty.openpty()
            tty.setraw(sl)  # no "\n" -> "\r\n", no echo
            masters[s], slaves[s] = m, sl
    p = subprocess.Popen(cmd, stdin=slaves.get("stdin"), stdout=slaves.get("stdout"),
                         stderr=slaves.get("stderr"))
    for sl in slaves.values():
        os.close(sl)
    got = {s: b"" for s in masters if s != "stdin"}
    open_fds = {masters[s]: s for s in got}
    while open_fds:
        ready, _, _ = select.select(list(open_fds), [], [], 60)
        if not ready:
            break
        for fd in ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the last writer closed the terminal
                data = b""
            if data:
                got[open_fds[fd]] += data
            else:
                del open_fds[fd]
    status = p.wait(timeout=60)
    if "stdin" in masters:
        termios.tcflush(masters["stdin"], termios.TCIOFLUSH)
    for m in masters.values():
        os.close(m)
    for s in ("stdout", "stderr"):
        if s not in got:
            continue
        data = got[s]
        if args.bytes and s == "stdout":
            print(f"tty {s}: {len(data)} bytes, starting {data[:12].hex()}")
            continue
        text = data.decode("utf-8", errors="replace")
        if args.progress and s == "stderr":
            draw = r"\r[^\r\n\x1b]+\x1b\[K"  # an erase has no text
            text = re.sub(f"({draw})(?:{draw})+", r"\1", text)
            text = re.sub(r"[0-9.]+[kMG]? nodes/s", "N nodes/s", text)
            lines = text.replace("\r", "\\r").split("\n")
            if lines and lines[-1] == "":
                lines.pop()
        else:
            lines = text.splitlines()
        for line in lines:
            print(f"tty {s}: {line}".replace("\x1b", "\\e"))
    print(f"status {status}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
