#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""held_wire.py - bytes a client under the library writes, and when they
reach the wire, for the request heads the library holds back to edit
(SPEC 10's deadline header, SPEC 9's injected Idempotency-Key).

  held_wire.py server DIR        a capture server (run bare) on a port of
        the kernel's choice; prints "ready PORT".  Keeps connection N's
        bytes in DIR/conn-N and, per piece received, the milliseconds
        since its accept in DIR/conn-N.t ("MS LEN" lines); DIR/conn-N.done
        appears once the connection ended.  Never answers.
  held_wire.py client CASE PORT  one client case (run under the library).

The shell test (test_http_held_bytes.sh) runs each case and checks DIR.
"""
import os
import select
import socket
import sys
import threading
import time


def serve(d):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    print("ready %d" % s.getsockname()[1], flush=True)
    n = 0
    while True:
        c, _ = s.accept()
        n += 1
        threading.Thread(target=conn, args=(c, os.path.join(d, "conn-%d" % n)),
                         daemon=True).start()


def conn(c, path):
    t0 = time.monotonic()
    data, times = b"", []
    c.settimeout(5)
    while True:
        try:
            b = c.recv(65536)
        except OSError:
            break
        if not b:
            break
        data += b
        times.append("%d %d" % ((time.monotonic() - t0) * 1000, len(b)))
    with open(path, "wb") as f:
        f.write(data)
    with open(path + ".t", "w") as f:
        f.write("\n".join(times) + "\n")
    c.close()
    open(path + ".done", "w").close()


# The beginnings of heads that the cases write, then end the connection.
PART = b"GET /part HTTP/1.1\r\nHost: x\r\n"
POST = b"POST /part HTTP/1.1\r\nHost: x\r\n"


def client(case, port):
    s = socket.create_connection(("127.0.0.1", port))
    if case == "letter-close":
        # CPython's SendfileUsingSendTest.testCountSmall: one byte, close.
        s.send(b"G")
        s.close()
    elif case == "part-close":
        s.send(PART)
        s.close()
    elif case == "post-close":
        s.send(POST)
        s.close()
    elif case in ("part-shutdown", "post-shutdown"):
        s.send(PART if case == "part-shutdown" else POST)
        s.shutdown(socket.SHUT_WR)
        time.sleep(0.3)
        s.close()
    elif case in ("part-gap", "post-gap"):
        # A head in two parts 0.6 s apart: whole, edited where it must.
        s.send(PART if case == "part-gap" else POST)
        time.sleep(0.6)
        s.send(b"Content-Length: 0\r\n\r\n" if case == "post-gap" else
               b"\r\n")
        time.sleep(0.1)
        s.close()
    elif case in ("part-select", "post-epoll", "part-read"):
        # Waits for an answer (the server never gives one) for 0.6 s.
        s.send(POST if case == "post-epoll" else PART)
        if case == "part-select":
            select.select([s], [], [], 0.6)
        elif case == "post-epoll":
            ep = select.epoll()
            ep.register(s.fileno(), select.EPOLLIN)
            ep.poll(0.6)
        else:
            s.settimeout(0.6)
            try:
                s.recv(10)
            except OSError:
                pass
        s.close()
    elif case == "part-gap-waiter":
        # Another thread waits in epoll meanwhile: the head is this
        # thread's, and stays held until it completes.
        done = []

        def waiter():
            ep = select.epoll()
            r, _ = os.pipe()
            ep.register(r, select.EPOLLIN)
            while not done:
                ep.poll(0.02)
        th = threading.Thread(target=waiter)
        th.start()
        s.send(PART)
        time.sleep(0.4)
        s.send(b"\r\n")
        done.append(1)
        th.join()
        time.sleep(0.1)
        s.close()
    elif case == "part-dup2":
        s.send(PART)
        t = socket.socket()
        os.dup2(t.fileno(), s.fileno())
        time.sleep(0.3)
    elif case == "part-exit":
        s.send(PART)
        sys.exit(0)
    elif case == "part-exec":
        s.send(PART)
        os.execv("/bin/sleep", ["sleep", "0.3"])
    elif case == "part-fork":
        # The child exits at once; the parent completes the head later:
        # the head's start must reach the wire once, not twice.
        s.send(PART)
        pid = os.fork()
        if pid == 0:
            sys.exit(0)
        os.waitpid(pid, 0)
        s.send(b"\r\n")
        time.sleep(0.1)
        s.close()
    else:
        sys.exit("no case " + case)


if sys.argv[1] == "server":
    serve(sys.argv[2])
else:
    client(sys.argv[2], int(sys.argv[3]))
