#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""https_eloop.py CA URL... - an event loop over TLS with sockets of its
own: python's ssl on non-blocking sockets (OpenSSL with SSL_set_fd), one
epoll (selectors.EpollSelector) for all of them, a GET on each URL at
once.  Prints "PATH STATUS BYTES MS" as each response ends (Content-Length
or the last chunk), MS from the start; exits 1 on any error, 2 when the
whole run takes over 20 s.
"""
import selectors
import socket
import ssl
import sys
import time
import urllib.parse


def main():
    ca, urls = sys.argv[1], sys.argv[2:]
    ctx = ssl.create_default_context(cafile=ca)
    sel = selectors.EpollSelector()
    t0 = time.monotonic()
    for u in urls:
        p = urllib.parse.urlsplit(u)
        raw = socket.create_connection((p.hostname, p.port))
        raw.setblocking(False)
        s = ctx.wrap_socket(raw, server_hostname=p.hostname,
                            do_handshake_on_connect=False)
        st = {"s": s, "path": p.path, "phase": "hs", "buf": bytearray(),
              "out": b"GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % p.path.encode()}
        sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, st)
    left = len(urls)

    def done(st, status):
        ms = int((time.monotonic() - t0) * 1000)
        print(st["path"], status, len(st["buf"]), ms, flush=True)
        sel.unregister(st["s"])
        st["s"].close()

    while left:
        if time.monotonic() - t0 > 20:
            sys.exit(2)
        for key, _ in sel.select(1):
            st = key.data
            s = st["s"]
            try:
                if st["phase"] == "hs":
                    s.do_handshake()
                    st["phase"] = "send"
                if st["phase"] == "send":
                    st["out"] = st["out"][s.send(st["out"]):]
                    if not st["out"]:
                        st["phase"] = "recv"
                        sel.modify(s, selectors.EVENT_READ, st)
                    continue
                while True:
                    d = s.recv(65536)
                    if not d:
                        raise EOFError(st["path"])
                    st["buf"] += d
                    head, sep, _ = bytes(st["buf"][:8192]).partition(
                        b"\r\n\r\n")
                    if not sep:
                        continue
                    body = len(st["buf"]) - len(head) - len(sep)
                    cl = [h for h in head.split(b"\r\n")
                          if h.lower().startswith(b"content-length:")]
                    if (cl and body >= int(cl[0].split(b":")[1])) or (
                            not cl and st["buf"].endswith(b"0\r\n\r\n")):
                        done(st, head.split(b" ")[1].decode())
                        left -= 1
                        break
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                pass


main()
