#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""stall_sink.py - a peer that accepts and does not read for a while.

    stall_sink.py PORTFILE STALL_MS RESULT LIMIT

Listens on 127.0.0.1 (an ephemeral port, written to PORTFILE) with a
small receive buffer, so that a client's upload of a few MB fills both
socket buffers and its writes must block.  For each connection, in turn:
accept, read nothing for STALL_MS, then read to end of file or LIMIT
bytes (a telnet client never ends its side), close, and append
"BYTES SHA256" of what arrived to RESULT.  Runs until killed; each
connection is bounded to 30 s.
"""
import hashlib
import os
import socket
import sys
import time


def pump(c, h, want):
    """Reads up to want bytes, or to end of file, into h; returns how many."""
    n = 0
    while n < want:
        d = c.recv(min(1 << 20, want - n))
        if not d:
            break
        h.update(d)
        n += len(d)
    return n


def main():
    portfile, stall, result = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    limit = int(sys.argv[4])
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Set before listen, so that accepted sockets inherit it.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    with open(portfile + ".new", "w") as f:
        f.write("%d\n" % s.getsockname()[1])
    os.rename(portfile + ".new", portfile)
    while True:
        c, _ = s.accept()
        c.settimeout(30)
        time.sleep(stall / 1000.0)
        h = hashlib.sha256()
        try:
            n = pump(c, h, limit)
        except OSError as e:
            sys.stderr.write("stall_sink: %s\n" % e)
            n = -1
        c.close()
        with open(result, "a") as f:
            f.write("%d %s\n" % (n, h.hexdigest()))


if __name__ == "__main__":
    main()
