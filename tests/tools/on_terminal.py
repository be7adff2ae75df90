#!/usr/bin/env python3
# on_terminal.py OUT COMMAND...: runs COMMAND with its stderr on a pseudo-terminal (stdin and stdout as given, so
# that a test can still compare stdout), writes the bytes it wrote there to OUT, and exits with its exit status.
# The terminal is raw: "\n" is not turned into "\r\n", so OUT holds exactly what the command wrote.
import os
import subprocess
import sys
import tty

master, slave = os.openpty()
tty.setraw(slave)
child = subprocess.Popen(sys.argv[2:], stderr=slave)
os.close(slave)
got = bytearray()
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:  # EIO: the command and its children have closed the terminal
        break
    if not chunk:
        break
    got += chunk
status = child.wait()
with open(sys.argv[1], "wb") as out:
    out.write(got)
sys.exit(status if status >= 0 else 128 - status)
