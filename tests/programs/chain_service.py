#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""chain_service.py - one hop of the deadline chain (SPEC 10, issue 16).

An ordinary, unmodified service: Python's ThreadingHTTPServer (a thread per
request), which on GET does a little work, then calls the next hop with
urllib (no timeout of its own) and answers 200 with what it got, or 502
when the call failed.  It knows nothing of deadlines; it only logs, one
line per event with the wall-clock time in epoch milliseconds, so a test
can tell when each hop started and stopped its downstream call:

    <epoch_ms> <name> recv deadline=<X-Request-Deadline or ->
    <epoch_ms> <name> call <url>
    <epoch_ms> <name> gave_up <error>        (or: ok <bytes>)

  chain_service.py NAME PORT WORK_MS NEXT_URL|- LOGFILE [thread|fork|pool]

With `fork`, the server is ForkingHTTPServer (a process per request,
prefork/PHP-style).  With `pool`, the handler hands the work to a worker thread pool and waits
for it: the documented case the library cannot follow (the worker is not
the thread that read the request).  With NEXT_URL `-` it answers at once
after its work (a slow backend).  Prints "ready" when listening; with
PORT 0, on a port of the kernel's choice, "ready PORT".
"""
import concurrent.futures
import http.server
import socketserver
import sys
import time
import urllib.request

NAME, PORT, WORK_MS, NEXT, LOG = sys.argv[1:6]
MODEL = sys.argv[6] if len(sys.argv) > 6 else "thread"
POOL = MODEL == "pool"
EXECUTOR = concurrent.futures.ThreadPoolExecutor(4) if POOL else None


def log(*words):
    line = "%d %s %s\n" % (time.time() * 1000, NAME, " ".join(words))
    with open(LOG, "a") as f:
        f.write(line)


def work():
    time.sleep(int(WORK_MS) / 1000.0)
    if NEXT == "-":
        log("ok", "answered")
        return 200, b"done\n"
    log("call", NEXT)
    try:
        with urllib.request.urlopen(NEXT) as r:
            body = r.read()
        log("ok", str(len(body)))
        return 200, body
    except Exception as e:  # the service's own error handling
        log("gave_up", type(e).__name__, str(e).replace("\n", " "))
        return 502, b"upstream failed\n"


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        log("recv", "deadline=" + self.headers.get("X-Request-Deadline", "-"))
        if EXECUTOR:
            status, body = EXECUTOR.submit(work).result()
        else:
            status, body = work()
        try:
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError as e:
            log("reply_failed", type(e).__name__)

    def log_message(self, fmt, *args):
        pass


if MODEL == "fork":
    class Server(socketserver.ForkingMixIn, http.server.HTTPServer):
        pass
else:
    Server = http.server.ThreadingHTTPServer
srv = Server(("127.0.0.1", int(PORT)), Handler)
srv.daemon_threads = True
print("ready %d" % srv.server_address[1] if int(PORT) == 0 else "ready",
      flush=True)
srv.serve_forever()
