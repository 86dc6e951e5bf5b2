#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""http_regress_server.py - the misbehaving HTTP/1.1 server of
test_http_regressions.sh, on 127.0.0.1 (an ephemeral port, written to
--port-file).  Each scenario is named by the path's first part, its
instance by the second, so that one server serves every case:

  /closing/ID   the first connection gets 503 with Connection: close; every
                later one is closed at once, before any response
  /bodyless/ID  per connection: a 204 first, then 503 (with a body) for
                the first try of the next request, then 200 "ok"
  /silent/ID    the request is read and never answered (held 5 s)
  /cut/ID/rst   "HTTP/" (the beginning of a status line), then a reset
  /cut/ID/fin   "HTTP/", then the connection closed (FIN)
  /_stats/ID    {"connections": N, "requests": M} of ID

Everything is bounded: --lifetime seconds in all, 5 s per connection.
"""
import argparse
import json
import socket
import struct
import threading
import time

lock = threading.Lock()
seen = {}


def count(ident, what):
    with lock:
        s = seen.setdefault(ident, {"connections": 0, "requests": 0})
        s[what] += 1
        return s[what]


def read_head(conn, buf):
    while b"\r\n\r\n" not in buf:
        more = conn.recv(4096)
        if not more:
            return None, b""
        buf += more
    head, rest = buf.split(b"\r\n\r\n", 1)
    return head.decode("latin-1"), rest


def reply(conn, status, body=b"", extra=""):
    conn.sendall(("HTTP/1.1 %s\r\nContent-Length: %d\r\n%s\r\n" %
                  (status, len(body), extra)).encode() + body)


def serve(conn):
    conn.settimeout(5)
    buf = b""
    first = None
    try:
        while True:
            head, buf = read_head(conn, buf)
            if head is None:
                return
            parts = head.split(" ")[1].strip("/").split("/") + ["", ""]
            kind, ident = parts[0], parts[1]
            if kind == "_stats":
                with lock:
                    body = json.dumps(seen.get(ident, {})).encode()
                reply(conn, "200 OK", body, "Connection: close\r\n")
                return
            if first is None:
                first = count(ident, "connections")
            n = count(ident, "requests")
            if kind == "closing":
                if first == 1:
                    reply(conn, "503 Busy", b"", "Connection: close\r\n")
                return
            if kind == "bodyless":
                if n == 1:
                    reply(conn, "204 No Content")
                elif n == 2:
                    reply(conn, "503 Busy", b"busy")
                else:
                    reply(conn, "200 OK", b"ok")
                continue
            if kind == "cut":
                conn.sendall(b"HTTP/")
                if parts[2] == "rst":
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                    struct.pack("ii", 1, 0))
                return
            if kind == "silent":
                time.sleep(5)
                return
            reply(conn, "404 Not Found", b"", "Connection: close\r\n")
            return
    except OSError:
        pass
    finally:
        conn.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--lifetime", type=float, default=120)
    args = ap.parse_args()
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    srv.settimeout(0.5)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(srv.getsockname()[1]))
    import os
    os.rename(args.port_file + ".tmp", args.port_file)
    end = time.monotonic() + args.lifetime
    while time.monotonic() < end:
        try:
            conn, _ = srv.accept()
        except socket.timeout:
            continue
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
