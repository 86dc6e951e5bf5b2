#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""http_server.py - a misbehaving HTTP/1.1 server for the HTTP retry tests.

Listens on 127.0.0.1 (port 0 unless --port), writes the port to --port-file
(or standard output) once ready, and serves until killed or --lifetime
seconds have passed.  Every scenario is named by its path, so one server
serves every client of a test run:

  /t/ID/STATUS/FAILS/RETRY_AFTER/CONN/FRAMING
      The first FAILS requests for ID get STATUS (503, 429, 404, ...) with
      `Retry-After: RETRY_AFTER` ("-" for none), the next ones 200 with
      "ok ID N" (N: this request's number).  CONN is "ka" (keep-alive) or
      "close" (Connection: close, then the server closes),
      "drop" (keep-alive announced, then the server closes anyway, as an
      idle timeout would); FRAMING is "cl" (Content-Length), "chunked",
      or "eof" (no length: until close).
  /big/ID/MEGABYTES
      200 with MEGABYTES MiB of a repeating pattern (Content-Length).
  /_stats/ID
      JSON {"count": N, "methods": [...], "keys": [...], "times": [...]} for
      ID: every request counted (any method), the Idempotency-Key of each
      ("" when absent), its arrival time (epoch seconds) and, in
      "deadlines", the X-Request-Deadline values it carried (a list per
      request).  Not counted.

Request bodies (Content-Length or chunked) are read whole, so POST, PUT and
Expect: 100-continue (answered by http.server) work.
"""
import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATS = {}
LOCK = threading.Lock()
PATTERN = bytes(range(256)) * 4096  # 1 MiB


def record(ident, method, key, deadlines=None):
    with LOCK:
        s = STATS.setdefault(ident, {"count": 0, "methods": [], "keys": [],
                                     "times": [], "deadlines": []})
        s["count"] += 1
        s["deadlines"].append(deadlines or [])
        s["methods"].append(method)
        s["keys"].append(key or "")
        s["times"].append(time.time())
        return s["count"]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet unless asked
        if self.server.verbose:
            sys.stderr.write("http_server: " + fmt % args + "\n")

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                self.rfile.read(size + 2) if size else None
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)

    def reply(self, status, body, extra=(), conn="ka", framing="cl"):
        self.send_response(status)
        for k, v in extra:
            self.send_header(k, v)
        if conn == "close" or framing == "eof":
            self.send_header("Connection", "close")
            self.close_connection = True
        elif conn == "drop":
            self.close_connection = True
        if framing == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
        elif framing == "cl":
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command == "HEAD":
            return
        if framing == "chunked":
            half = len(body) // 2
            for part in (body[:half], body[half:]):
                if part:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.wfile.write(body)

    def scenario(self, parts):
        ident, status, fails, ra, conn, framing = parts
        n = record(ident, self.command, self.headers.get("Idempotency-Key"),
                   self.headers.get_all("X-Request-Deadline"))
        if n <= int(fails):
            extra = [] if ra == "-" else [("Retry-After", ra)]
            body = b"busy %s %d\n" % (ident.encode(), n)
            self.reply(int(status), body, extra, conn, framing)
        else:
            self.reply(200, b"ok %s %d\n" % (ident.encode(), n), (), conn,
                       framing)

    def big(self, ident, mib):
        record(ident, self.command, self.headers.get("Idempotency-Key"))
        self.send_response(200)
        self.send_header("Content-Length", str(mib << 20))
        self.end_headers()
        for _ in range(mib):
            self.wfile.write(PATTERN)

    def handle_any(self):
        self.read_body()
        parts = self.path.split("?")[0].strip("/").split("/")
        if parts[0] == "t" and len(parts) == 7:
            return self.scenario(parts[1:])
        if parts[0] == "big" and len(parts) == 3:
            return self.big(parts[1], int(parts[2]))
        if parts[0] == "_stats" and len(parts) == 2:
            with LOCK:
                body = json.dumps(STATS.get(parts[1], {"count": 0,
                    "methods": [], "keys": [], "times": []})).encode()
            return self.reply(200, body, [("Content-Type",
                                           "application/json")])
        self.reply(404, b"no such scenario\n")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = handle_any


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--lifetime", type=float, default=600)
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.verbose = a.verbose
    port = str(srv.server_address[1])
    if a.port_file:
        with open(a.port_file + ".tmp", "w") as f:
            f.write(port + "\n")
        import os
        os.rename(a.port_file + ".tmp", a.port_file)
    else:
        print(port, flush=True)
    timer = threading.Timer(a.lifetime, srv.shutdown)
    timer.daemon = True
    timer.start()
    srv.serve_forever()


if __name__ == "__main__":
    main()
