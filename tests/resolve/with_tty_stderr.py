#!/usr/bin/env python3
"""Runs a command with its stderr on a pseudo-terminal and its stdout on a pipe, for the
`gpulock resolve` progress test (progress is drawn only when stderr is a terminal).

Usage: with_tty_stderr.py PROGRAM ARGS...   (environment passed through)
Writes the command's stdout to stdout and what it wrote to the terminal to stderr, byte for
byte, and exits with its exit status.
"""
import os
import pty
import subprocess
import sys


def main() -> int:
    master, slave = pty.openpty()
    proc = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    out = proc.stdout.read()
    status = proc.wait()
    os.close(master)
    sys.stdout.buffer.write(out)
    # The terminal turns "\n" into "\r\n"; give back what the program wrote.
    sys.stderr.buffer.write(b"".join(chunks).replace(b"\r\n", b"\n"))
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main())
