#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""http_reconnect_server.py - servers for test_http_reconnect.sh, on
127.0.0.1; prints the port(s) on one line, then serves for at most 40 s.

  again:  the 1st request of a connection gets 200 (keep-alive), the 2nd
          a 503 with Connection: close (the library retries it on a new
          connection), the 1st on a later connection 200, anything after
          that no answer (a read timeout).
  stuck PORT: one 503 with Connection: close, after which the listener's
          accept queue is kept full (a reconnect's SYN is dropped: the
          reconnect waits); and a second server on another port that
          answers 503 then 200 on each connection.  Prints both ports.
"""
import socket
import sys
import threading
import time


def listener(backlog):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(backlog)
    return s


def requests(c):
    """Yields once per request head received on c, until end of file."""
    buf = b""
    while True:
        d = c.recv(4096)
        if not d:
            return
        buf += d
        while b"\r\n\r\n" in buf:
            _, buf = buf.split(b"\r\n\r\n", 1)
            yield


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
BUSY = b"HTTP/1.1 503 Busy\r\nRetry-After: 0\r\nContent-Length: 0\r\n\r\n"
BUSY_CLOSE = (b"HTTP/1.1 503 Busy\r\nRetry-After: 0\r\nConnection: close\r\n"
              b"Content-Length: 0\r\n\r\n")


def serve_again(c, nth):
    for n, _ in enumerate(requests(c), 1):
        if nth == 1 and n == 1:
            c.sendall(OK)
        elif nth == 1 and n == 2:
            c.sendall(BUSY_CLOSE)
            c.close()
            return
        elif nth == 2 and n == 1:
            c.sendall(OK)


def again():
    s = listener(8)
    print(s.getsockname()[1], flush=True)
    nth = 0
    while True:
        c, _ = s.accept()
        nth += 1
        threading.Thread(target=serve_again, args=(c, nth),
                         daemon=True).start()


def stuck():
    one, two = listener(0), listener(8)
    print(one.getsockname()[1], two.getsockname()[1], flush=True)

    def first():
        c, _ = one.accept()
        c.recv(4096)
        fill = []
        for _ in range(3):
            f = socket.socket()
            f.setblocking(False)
            try:
                f.connect(("127.0.0.1", one.getsockname()[1]))
            except BlockingIOError:
                pass
            fill.append(f)
        time.sleep(0.2)
        c.sendall(BUSY_CLOSE)
        c.close()
        time.sleep(40)

    def second():
        while True:
            c, _ = two.accept()
            for n, _ in enumerate(requests(c), 1):
                c.sendall(BUSY if n == 1 else OK)

    threading.Thread(target=first, daemon=True).start()
    threading.Thread(target=second, daemon=True).start()


if __name__ == "__main__":
    threading.Thread(target=again if sys.argv[1] == "again" else stuck,
                     daemon=True).start()
    time.sleep(40)
