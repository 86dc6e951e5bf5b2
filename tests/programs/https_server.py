#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""https_server.py - http_server.py's scenarios behind TLS, for the tests
of HTTP retries over TLS (test_https_retry.sh).

Two listeners on 127.0.0.1 in one process, their ports written as "A B"
to --port-file once ready:
  A  presents --cert (the server's certificate, made by the test's CA).
  B  presents --cert for as many handshakes as the last GET /_arm/N on A
     allowed, and --bad-cert after them (a certificate for another name),
     so that a replay that makes the session anew meets a certificate the
     client must refuse.  B resumes no session (a resumed one shows no
     certificate).
Every path of http_server.py works on both, sharing one set of counters,
and one more, for the record boundaries of the engine's reads:
  /split/ID/SEED/FAILS
      The first FAILS requests for ID get 503 with Retry-After: 0, the next
      200 "split ID N"; each response (head and body, chunked) is written
      in pieces of 1 to 40 bytes drawn from SEED and the request's number,
      each piece its own TLS record.
  /files/ID/FAILS/RETRY_AFTER/CONN/PATH
      With --files DIR: the first FAILS requests for ID get 503 with
      `Retry-After: RETRY_AFTER` (CONN: "ka" or "close", as for /t/),
      the next ones DIR/PATH (kept alive: 200, its bytes; 404 when it
      is no file under DIR), the query ignored: a static ("dumb") git
      repository served behind a busy spell.  CONN "rst": each 503 keeps
      the connection, and the next request on it is counted, then the
      connection reset (SO_LINGER 0) unanswered; "rstwait": the
      connection is reset 0.3 s after each 503 (during a client's
      Retry-After wait).
"""
import argparse
import os
import random
import socket
import ssl
import struct
import sys
import threading
import time
from http.server import ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_server  # noqa: E402

ARMED = [0]
FILES = [None]


class Handler(http_server.Handler):
    def handle_any(self):
        if self.path.startswith("/_arm/"):
            ARMED[0] = int(self.path.split("/")[2])
            self.reply(200, b"armed\n")
            return
        if self.path.startswith("/split/"):
            self.split(*self.path.split("/")[2:5])
            return
        if self.path.startswith("/files/") and FILES[0]:
            self.files(*self.path.split("?")[0].split("/", 6)[2:])
            return
        super().handle_any()

    def reset(self):
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                   struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    def files(self, ident, fails, ra, conn, rest):
        self.read_body()
        n = http_server.record(ident, self.command, None,
                               self.headers.get_all("X-Request-Deadline"))
        if getattr(self, "rst_next", False):
            self.reset()
            return
        if n <= int(fails):
            resets = conn in ("rst", "rstwait")
            self.reply(503, b"busy %d\n" % n, [("Retry-After", ra)],
                       "ka" if resets else conn)
            self.rst_next = conn == "rst"
            if conn == "rstwait":
                self.wfile.flush()
                time.sleep(0.3)
                self.reset()
            return
        path = os.path.realpath(os.path.join(FILES[0], rest))
        if path.startswith(FILES[0] + os.sep) and os.path.isfile(path):
            with open(path, "rb") as f:
                self.reply(200, f.read())
        else:
            self.reply(404, b"no such file\n")

    def split(self, ident, seed, fails):
        n = http_server.record(ident, self.command, None)
        if n <= int(fails):
            head = b"HTTP/1.1 503 Busy\r\nRetry-After: 0\r\n"
            body = b"busy %d\n" % n
        else:
            head = b"HTTP/1.1 200 OK\r\n"
            body = b"split %s %d\n" % (ident.encode(), n)
        out = (head + b"Transfer-Encoding: chunked\r\n\r\n" +
               b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 3]), body[i:i + 3])
                        for i in range(0, len(body), 3)) + b"0\r\n\r\n")
        rng = random.Random("%s/%d" % (seed, n))
        i = 0
        while i < len(out):
            k = rng.randint(1, 40)
            self.wfile.write(out[i:i + k])
            self.wfile.flush()
            i += k

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = handle_any


def context(cert, key):
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    c.load_cert_chain(cert, key)
    return c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--bad-cert", required=True)
    ap.add_argument("--bad-key", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--lifetime", type=float, default=600)
    ap.add_argument("--files")
    a = ap.parse_args()
    if a.files:
        FILES[0] = os.path.realpath(a.files)
    good = context(a.cert, a.key)
    bad = context(a.bad_cert, a.bad_key)
    switching = context(a.cert, a.key)
    # No resumption on B: a resumed session shows no certificate at all.
    switching.options |= ssl.OP_NO_TICKET
    switching.num_tickets = 0

    def pick(sock, name, ctx):
        if ARMED[0] > 0:
            ARMED[0] -= 1
        else:
            sock.context = bad
    switching.sni_callback = pick
    servers = []
    for ctx in (good, switching):
        srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        srv.daemon_threads = True
        srv.verbose = False
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True,
                                     do_handshake_on_connect=False)
        servers.append(srv)
    ports = " ".join(str(s.server_address[1]) for s in servers)
    with open(a.port_file + ".tmp", "w") as f:
        f.write(ports + "\n")
    os.rename(a.port_file + ".tmp", a.port_file)
    for s in servers[1:]:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    timer = threading.Timer(a.lifetime, servers[0].shutdown)
    timer.daemon = True
    timer.start()
    servers[0].serve_forever()


if __name__ == "__main__":
    main()
