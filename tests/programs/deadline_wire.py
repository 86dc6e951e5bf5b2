#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""deadline_wire.py - what the library puts on the wire for SPEC 10.

  deadline_wire.py server PORT DIR      a capture server (run bare): keeps
        every connection's bytes in DIR/conn-N, answers each GET head
        with a small 200 (keep-alive), prints "ready"; with PORT 0, on a
        port of the kernel's choice, "ready PORT".  DIR/conn-N.done
        appears once connection N has ended and conn-N is whole.
  deadline_wire.py get URL              a GET, printing the status like
        curl -w '%{http_code}' (the chain's client where curl cannot run).
  deadline_wire.py client CASE PORT     one client case (run under the
        library): curl-like GETs with urllib/http.client, raw sockets.

The shell test (test_deadline_headers.sh) runs each case and checks DIR.
"""
import os
import socket
import sys
import threading
import time

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


def serve(port, d):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(16)
    print("ready %d" % s.getsockname()[1] if port == 0 else "ready",
          flush=True)
    n = 0
    while True:
        c, _ = s.accept()
        n += 1
        threading.Thread(target=conn, args=(c, os.path.join(d, "conn-%d" % n)),
                         daemon=True).start()


def conn(c, path):
    data = b""
    answered = 0
    c.settimeout(5)
    while True:
        try:
            b = c.recv(65536)
        except OSError:
            break
        if not b:
            break
        data += b
        with open(path + ".new", "wb") as f:
            f.write(data)
        os.rename(path + ".new", path)
        heads = data.count(b"\r\n\r\n") if data.startswith(b"GET") else 0
        while answered < heads:
            c.sendall(OK)
            answered += 1
    c.close()
    # The test reads conn-N after this: a client that sends and closes
    # without waiting for an answer can be done before this thread has
    # read its bytes.
    open(path + ".done", "w").close()


def get(url):
    """Like curl -w '%{http_code}': prints the status (000: none), exits
    non-zero when there was no response."""
    import urllib.error
    import urllib.request
    try:
        with urllib.request.urlopen(url) as r:
            r.read()
            print(r.status, end="")
    except urllib.error.HTTPError as e:
        print(e.code, end="")
    except OSError as e:
        print("000", end="")
        print(e, file=sys.stderr)
        sys.exit(56)


def client(case, port):
    addr = ("127.0.0.1", port)
    if case in ("keepalive", "plain"):
        import http.client
        h = http.client.HTTPConnection(*addr)
        for path in (["/1", "/2"] if case == "keepalive" else ["/1"]):
            h.request("GET", path)
            assert h.getresponse().read() == b"ok"
        h.close()
        return
    s = socket.create_connection(addr)
    if case == "split":
        s.sendall(b"GET /split HTTP/1.1\r\nHost: x\r\nUser-")
        time.sleep(0.05)
        s.sendall(b"Agent: t\r\n\r\n")
    elif case == "earlier":
        s.sendall(b"GET /e HTTP/1.1\r\nX-Request-Deadline: 1000\r\n\r\n")
    elif case == "later":
        s.sendall(b"GET /l HTTP/1.1\r\nX-Request-Deadline: 99999999999999"
                  b"\r\n\r\n")
    elif case == "redis":
        s.sendall(b"*1\r\n$4\r\nPING\r\n")
        s.sendall(b"GET /not-a-request HTTP/1.1\r\n\r\n")
        time.sleep(0.1)
        s.close()
        return
    got = b""
    s.settimeout(3)
    while not got.endswith(b"ok"):
        b = s.recv(4096)
        if not b:
            break
        got += b
    assert got.endswith(b"ok"), got
    s.close()


if sys.argv[1] == "server":
    serve(int(sys.argv[2]), sys.argv[3])
elif sys.argv[1] == "get":
    get(sys.argv[2])
else:
    client(sys.argv[2], int(sys.argv[3]))
