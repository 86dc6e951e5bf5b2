#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""servers.py - the soak's misbehaving servers (tests/soak/run.sh).

    servers.py echo PORT DIR [--life S]         length-prefixed echo
    servers.py http PORT,PORT2 DIR [--life S]   HTTP/1.1, 503s, a ledger

Both listen on 0.0.0.0 (inside the soak's private network namespace, which
has nothing but loopback) and read the fault mode from DIR/mode, a word
re-read at most every 200 ms:

  quiet     well-behaved
  rst       a third of the exchanges end with a TCP reset (SO_LINGER 0) at
            a random point: before the reply, or after part of it
  trickle   replies go out 8 KiB at a time, 10 ms apart (~800 KB/s)

Echo: a frame is a 4-byte big-endian length N and N bytes; the reply is
the same frame, byte for byte.

HTTP: GET /data/SEED/SIZE answers SIZE bytes of random.Random(SEED); POST
/op/OPID "executes" OPID once: one line "OPID KEY" is appended to
DIR/ledger (KEY: the Idempotency-Key, "-" if none) before the 200 answer,
and a POST whose key was already executed is answered from the ledger
without executing again (as a payments API would).  About one request in
twenty gets 503 with Retry-After 0 or 1 (never executed).  Every POST's
arrival is appended to DIR/arrivals, "OPID KEY STATUS", so that the soak
can prove a keyless POST never came twice.  Both files survive restarts
(the soak kills this server); the key set is reloaded from the ledger.
With SOAK_TLS_PORT set (one of the http ports), that port speaks HTTPS
with SOAK_TLS_CERT and SOAK_TLS_KEY.  Exits after --life seconds (default
3600), so a forgotten one ends.
"""
import asyncio
import os
import random
import socket
import struct
import sys
import time

MODE = {"word": "quiet", "at": 0.0}
RNG = random.Random()
DATA = {}


def mode(d):
    now = time.monotonic()
    if now - MODE["at"] > 0.2:
        MODE["at"] = now
        try:
            with open(os.path.join(d, "mode")) as f:
                MODE["word"] = f.read().strip() or "quiet"
        except OSError:
            MODE["word"] = "quiet"
    return MODE["word"]


def reset(writer):
    """Closes with a TCP reset: SO_LINGER on with a zero timeout."""
    sock = writer.get_extra_info("socket")
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                        struct.pack("ii", 1, 0))
    except OSError:
        pass
    writer.transport.abort()


async def send(d, writer, data):
    """Writes data as the mode says; False when it reset the connection."""
    m = mode(d)
    if m == "rst" and RNG.random() < 0.33:
        cut = RNG.randrange(0, len(data) + 1)
        writer.write(data[:cut])
        await writer.drain()
        reset(writer)
        return False
    if m == "trickle":
        for i in range(0, len(data), 8192):
            writer.write(data[i:i + 8192])
            await writer.drain()
            await asyncio.sleep(0.01)
        return True
    writer.write(data)
    await writer.drain()
    return True


async def echo_conn(d, reader, writer):
    try:
        while True:
            head = await reader.readexactly(4)
            (n,) = struct.unpack("!I", head)
            if n > (1 << 20) + 64:
                break
            body = await reader.readexactly(n)
            if not await send(d, writer, head + body):
                return
    except (asyncio.IncompleteReadError, ConnectionError, OSError):
        pass
    writer.close()


def data_bytes(seed, size):
    key = (seed, size)
    if key not in DATA:
        if len(DATA) > 64:
            DATA.clear()
        DATA[key] = random.Random(seed).randbytes(size)
    return DATA[key]


class Ledger:
    """The executed keys, loaded from DIR/ledger, and the two logs."""

    def __init__(self, d):
        self.keys = {}
        path = os.path.join(d, "ledger")
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    w = line.split()
                    if len(w) == 2 and w[1] != "-":
                        self.keys[w[1]] = w[0]
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        self.ledger = os.open(path, flags, 0o644)
        self.arrivals = os.open(os.path.join(d, "arrivals"), flags, 0o644)

    def arrive(self, opid, key, status):
        os.write(self.arrivals, b"%s %s %d\n" % (opid, key, status))

    def execute(self, opid, key):
        """Returns the op that key executed, executing opid if none did."""
        k = key.decode()
        if k != "-" and k in self.keys:
            return self.keys[k].encode()
        os.write(self.ledger, b"%s %s\n" % (opid, key))
        if k != "-":
            self.keys[k] = opid.decode()
        return opid


async def read_request(reader):
    line = await reader.readline()
    if not line:
        return None
    heads = {}
    while True:
        h = await reader.readline()
        if h in (b"\r\n", b"\n", b""):
            break
        k, _, v = h.partition(b":")
        heads[k.strip().lower()] = v.strip()
    n = int(heads.get(b"content-length", b"0"))
    body = await reader.readexactly(n) if n else b""
    return line.split(), heads, body


def response(status, body, extra=b""):
    reason = {200: b"OK", 404: b"Not Found", 503: b"Busy"}[status]
    return b"HTTP/1.1 %d %s\r\nContent-Length: %d\r\n%s\r\n%s" % (
        status, reason, len(body), extra, body)


def route(ledger, req):
    words, heads, _ = req
    method, parts = words[0], words[1].split(b"/")
    if RNG.random() < 0.05:
        ra = RNG.choice([b"0", b"1"])
        if method == b"POST" and len(parts) == 3:
            key = heads.get(b"idempotency-key", b"-")
            ledger.arrive(parts[2], key, 503)
        return response(503, b"busy\n", b"Retry-After: %s\r\n" % ra)
    if method == b"GET" and len(parts) == 4 and parts[1] == b"data":
        return response(200, data_bytes(int(parts[2]), int(parts[3])))
    if method == b"POST" and len(parts) == 3 and parts[1] == b"op":
        key = heads.get(b"idempotency-key", b"-")
        ledger.arrive(parts[2], key, 200)
        done = ledger.execute(parts[2], key)
        return response(200, b"done " + done + b"\n")
    return response(404, b"no\n")


async def http_conn(d, ledger, reader, writer):
    try:
        while True:
            req = await read_request(reader)
            if req is None or len(req[0]) < 2:
                break
            if not await send(d, writer, route(ledger, req)):
                return
    except (asyncio.IncompleteReadError, ConnectionError, OSError,
            ValueError):
        pass
    writer.close()


async def lag_monitor(path):
    """Appends "SEC LAG_MS" to path whenever the event loop ran a 100-ms
    timer more than 500 ms late: a server too starved to answer within a
    client's read timeout says so (a frozen one too, once thawed)."""
    while True:
        t = time.monotonic()
        await asyncio.sleep(0.1)
        late = time.monotonic() - t - 0.1
        if late > 0.5:
            with open(path, "a") as f:
                f.write("%d %d\n" % (time.time(), late * 1000))


def tls_context():
    """The HTTPS port's context: SOAK_TLS_CERT and SOAK_TLS_KEY."""
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.environ["SOAK_TLS_CERT"],
                        os.environ["SOAK_TLS_KEY"])
    return ctx


async def main():
    kind, ports, d = sys.argv[1], sys.argv[2], sys.argv[3]
    life = float(sys.argv[5]) if len(sys.argv) > 5 else 3600.0  # --life S
    servers = []
    if kind == "echo":
        def handler(r, w):
            return echo_conn(d, r, w)
    else:
        ledger = Ledger(d)

        def handler(r, w):
            return http_conn(d, ledger, r, w)
    for p in ports.split(","):
        servers.append(await asyncio.start_server(
            handler, "0.0.0.0", int(p), backlog=512, reuse_address=True,
            ssl=tls_context() if p == os.environ.get("SOAK_TLS_PORT")
            else None))
    print("ready", flush=True)
    asyncio.get_running_loop().create_task(
        lag_monitor(os.path.join(d, "lag." + kind)))
    await asyncio.sleep(life)


if __name__ == "__main__":
    asyncio.run(main())
