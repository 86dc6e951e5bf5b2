#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""deadline_bodyless.py PORT-FILE RESULT-FILE - a ThreadingHTTPServer on
127.0.0.1 whose handler answers 204 (a response without a body) and then,
in the same thread, 400 ms later, connects to a backend of its own on
127.0.0.1.  The result of that connect ("connected" or "error ERRNO") goes
to RESULT-FILE.  Run under the library with inbound_deadline: the
request's deadline must end with the 204, so the later connect is not
bound by it.  Serves for 20 s at most."""
import http.server
import os
import socket
import sys
import threading
import time

backend = socket.socket()
backend.bind(("127.0.0.1", 0))
backend.listen(8)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        self.send_response(204)
        self.end_headers()
        self.wfile.flush()
        time.sleep(0.4)
        try:
            s = socket.create_connection(backend.getsockname(), timeout=2)
            s.close()
            result = "connected"
        except OSError as e:
            result = "error %d" % e.errno
        with open(sys.argv[2], "w") as f:
            f.write(result + "\n")


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
threading.Timer(20, srv.shutdown).start()
srv.serve_forever()
