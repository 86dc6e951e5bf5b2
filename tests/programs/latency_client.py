#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A client of lognormal_server.py that times its own requests.

latency_client.py PORT N: makes N requests on one connection and prints
each one's time from its send to its answer, in ms, one a line.
latency_client.py PORT stall: sends STALL and prints "stall MS ERRNO",
how long the read took to fail (under resolute's read_timeout) and why.
latency_client.py PORT hold FILE: one request, then waits (20 s at most)
for FILE to exist, then does as stall on the same connection.
"""
import errno
import os
import socket
import sys
import time


def main():
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    if sys.argv[2] == "hold":
        s.sendall(b"GET\n")
        s.recv(16)
        for _ in range(200):
            if os.path.exists(sys.argv[3]):
                break
            time.sleep(0.1)
        sys.argv[2] = "stall"
    if sys.argv[2] == "stall":
        s.sendall(b"STALL\n")
        t0 = time.monotonic()
        try:
            data = s.recv(16)
            print("stall %.1f data %r" % ((time.monotonic() - t0) * 1000,
                                          data))
        except OSError as e:
            print("stall %.1f %s" % ((time.monotonic() - t0) * 1000,
                                     errno.errorcode.get(e.errno, e.errno)))
        return
    for _ in range(int(sys.argv[2])):
        t0 = time.monotonic()
        s.sendall(b"GET\n")
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(16)
            if not chunk:
                sys.exit("closed")
            buf += chunk
        print("%.3f" % ((time.monotonic() - t0) * 1000))


main()
