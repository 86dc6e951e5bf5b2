#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A line server whose answers are delayed by a known distribution.

lognormal_server.py PORTFILE [MEDIAN_MS] [SIGMA]: listens on 127.0.0.1,
port 0, writes its port to PORTFILE, and answers every line "GET\\n" with
"ok\\n" after a delay drawn from a log-normal distribution (median
MEDIAN_MS, 10 by default; shape SIGMA, 0.5), and a line "STALL\\n" never
(the connection stays silent until the client gives up).  A thread per
connection; runs until killed.
"""
import os
import random
import socket
import sys
import threading
import time


def serve(conn, median_s, sigma):
    f = conn.makefile("rb")
    try:
        for line in f:
            if line.startswith(b"STALL"):
                time.sleep(600)
                return
            time.sleep(random.lognormvariate(0, sigma) * median_s)
            conn.sendall(b"ok\n")
    except OSError:
        pass
    finally:
        conn.close()


def main():
    median_s = float(sys.argv[2]) / 1000 if len(sys.argv) > 2 else 0.010
    sigma = float(sys.argv[3]) if len(sys.argv) > 3 else 0.5
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    tmp = sys.argv[1] + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(s.getsockname()[1]))
    os.rename(tmp, sys.argv[1])
    while True:
        conn, _ = s.accept()
        threading.Thread(target=serve, args=(conn, median_s, sigma),
                         daemon=True).start()


main()
