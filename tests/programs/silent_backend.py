#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""silent_backend.py PORT LOGFILE SECONDS - a backend that accepts
connections and never answers; logs "<epoch_ms> backend conn" for each
connection it accepts, so a test can tell whether a request reached it.
Exits after SECONDS.  Prints "ready" when listening; with PORT 0, on a
port of the kernel's choice, "ready PORT"."""
import socket
import sys
import time

port, log, secs = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(64)
s.settimeout(0.05)
print("ready %d" % s.getsockname()[1] if port == 0 else "ready", flush=True)
held, end = [], time.time() + secs
while time.time() < end:
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    held.append(c)
    with open(log, "a") as f:
        f.write("%d backend conn\n" % (time.time() * 1000))
