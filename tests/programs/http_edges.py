#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""http_edges.py - what epoll reports to a client whose response the
library judges (SPEC 9, on a non-blocking socket), printed so that
test_http_epoll_edges.sh can compare a run under the library with a bare
one.

  http_edges.py server           answers each request head, 100 ms after
        it came, with a 200 (keep-alive); prints "ready PORT".
  http_edges.py client MODE PORT et | lt | oneshot: one connection
        registered EPOLLIN|EPOLLOUT (plus EPOLLET or EPOLLONESHOT); two
        requests, each followed by waits printed as "wN EVENTS" (the
        events of the client, or "-"), the response read in between:
        the first waited for once its response is queued, the second
        at once (the library judges it meanwhile).
"""
import select
import socket
import sys
import threading
import time

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


def serve():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    print("ready %d" % s.getsockname()[1], flush=True)
    while True:
        c, _ = s.accept()
        threading.Thread(target=conn, args=(c,), daemon=True).start()


def conn(c):
    data = b""
    while True:
        b = c.recv(4096)
        if not b:
            break
        data += b
        while b"\r\n\r\n" in data:
            data = data.split(b"\r\n\r\n", 1)[1]
            time.sleep(0.1)
            c.sendall(OK)
    c.close()


def names(ev):
    out = [n for b, n in ((select.EPOLLIN, "IN"), (select.EPOLLOUT, "OUT"),
                          (select.EPOLLERR, "ERR"), (select.EPOLLHUP, "HUP"))
           if ev & b]
    return "|".join(out) or "-"


def client(mode, port):
    flag = {"et": select.EPOLLET, "lt": 0, "oneshot": select.EPOLLONESHOT}
    want = select.EPOLLIN | select.EPOLLOUT | flag[mode]
    s = socket.create_connection(("127.0.0.1", port))
    s.setblocking(False)
    ep = select.epoll()
    ep.register(s.fileno(), want)
    n = 0

    def wait(t):
        nonlocal n
        n += 1
        ev = 0
        for _, e in ep.poll(t):
            ev |= e
        print("w%d %s" % (n, names(ev)), flush=True)
    wait(1)
    for queued in (True, False):
        s.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        if mode == "oneshot":
            ep.modify(s.fileno(), want)
        # The response is in the queue by now, or comes in 100 ms.
        if queued:
            time.sleep(0.3)
        wait(1)
        wait(0.2)
        got = b""
        while len(got) < len(OK):
            select.select([s], [], [], 1)
            got += s.recv(4096)
        print("read", got == OK, flush=True)
        if mode == "oneshot":
            ep.modify(s.fileno(), want)
        wait(0.2)
        wait(0.2)


if sys.argv[1] == "server":
    serve()
else:
    client(sys.argv[2], int(sys.argv[3]))
