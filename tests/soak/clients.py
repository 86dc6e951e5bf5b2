#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""clients.py - the soak's clients (tests/soak/run.sh), run with or without
the library preloaded; they know nothing of it.

    clients.py single  NAME MODE OUT LIFE   one thread, blocking sockets
    clients.py threads NAME MODE OUT LIFE   16 threads, sockets with timeouts
    clients.py async   NAME MODE OUT LIFE   asyncio (epoll), 200 connections
    clients.py once    NAME MODE OUT KIND   one operation (the short-lived
                                            stream): echo, get or post

Targets come from SOAK_ECHO, SOAK_WEB (an HTTP rule that injects keys),
SOAK_WEB2 (one that does not) and SOAK_REDIS, each HOST:PORT; names are
resolved at every connect (the soak's DNS server), so DNS faults and dead
addresses reach them.  Every operation is checked byte for byte and ends
as one of ok, err (an error was reported), corrupt (an answer that is not
the one sent or expected) or hung (not over within SOAK_HUNG_S, 15 s, the
client's own deadline: a blocking one by SIGALRM, the others by socket or
asyncio timeouts).  OUT gets one line per second with operations:
"SEC NAME MODE ok err corrupt hung", and at the end "# errors NAME {...}";
OUT.errors one line per operation that failed, with its reason.
"""
import asyncio
import collections
import errno
import json
import os
import random
import signal
import socket
import struct
import sys
import threading
import time

HUNG_S = float(os.environ.get("SOAK_HUNG_S", "15"))
OUTCOMES = ("ok", "err", "corrupt", "hung")


def target(var):
    host, _, port = os.environ[var].rpartition(":")
    return host, int(port)


class Corrupt(Exception):
    pass


class Hung(Exception):
    pass


class Recorder:
    """Counts outcomes per second; writes finished seconds every 2 s."""

    def __init__(self, name, mode, out):
        self.name, self.mode = name, mode
        self.f = open(out, "a")
        # One line per failed operation, "SEC NAME MODE OUTCOME REASON",
        # so that the report can say which fault each error came from.
        self.ef = open(out + ".errors", "a")
        self.secs = collections.defaultdict(lambda: [0, 0, 0, 0])
        self.errors = collections.Counter()
        self.lock = threading.RLock()
        self.flushed = time.time()

    def add(self, outcome, t0, exc=None, bound=HUNG_S):
        if outcome != "hung" and time.monotonic() - t0 > bound:
            outcome = "hung"
        with self.lock:
            key = (int(time.time()), self.mode)
            self.secs[key][OUTCOMES.index(outcome)] += 1
            if exc is not None:
                self.errors[self.mode + ":" + why(exc)] += 1
            if outcome != "ok":
                self.ef.write("%d %s %s %s %s %d\n" % (
                    time.time(), self.name, self.mode, outcome,
                    why(exc).replace(" ", "_") if exc else "-",
                    (time.monotonic() - t0) * 1000))
            if time.time() - self.flushed > 2:
                self.flush(False)

    def flush(self, everything):
        with self.lock:
            now = int(time.time())
            for sec, mode in sorted(self.secs):
                if sec < now or everything:
                    c = self.secs.pop((sec, mode))
                    self.f.write("%d %s %s %d %d %d %d\n" % (
                        sec, self.name, mode, *c))
            if everything:
                self.f.write("# errors %s %s\n" % (
                    self.name, json.dumps(dict(self.errors))))
            self.f.flush()
            self.ef.flush()
            self.flushed = time.time()


def why(exc):
    if type(exc).__name__ == "Reason":
        return str(exc)
    if isinstance(exc, Corrupt):
        return "corrupt " + str(exc)[:60]
    if isinstance(exc, OSError) and exc.errno:
        return errno.errorcode.get(exc.errno, str(exc.errno))
    return type(exc).__name__


def size(rng, cap):
    return min(cap, int(2 ** rng.uniform(0, 20)))


# --- operations on blocking sockets (single, threads, once) -----------------

def recv_exact(s, n):
    parts, got = [], 0
    while got < n:
        b = s.recv(min(n - got, 1 << 20))
        if not b:
            raise ConnectionError("eof after %d of %d bytes" % (got, n))
        parts.append(b)
        got += len(b)
    return b"".join(parts)


def echo_op(s, rng, cap):
    body = rng.randbytes(size(rng, cap))
    frame = struct.pack("!I", len(body)) + body
    s.sendall(frame)
    if recv_exact(s, len(frame)) != frame:
        raise Corrupt("echo reply differs")


def http_read(s):
    head = b""
    while b"\r\n\r\n" not in head:
        b = s.recv(4096)
        if not b:
            raise ConnectionError("eof in response head")
        head += b
    head, _, rest = head.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    n = 0
    for h in lines[1:]:
        k, _, v = h.partition(b":")
        if k.strip().lower() == b"content-length":
            n = int(v)
    if len(rest) < n:
        rest += recv_exact(s, n - len(rest))
    elif len(rest) > n:
        raise Corrupt("bytes beyond the response")
    return status, rest


def http_get(s, rng, host, cap):
    seed, n = rng.randrange(1 << 30), size(rng, cap)
    s.sendall(b"GET /data/%d/%d HTTP/1.1\r\nHost: %s\r\n\r\n" % (
        seed, n, host.encode()))
    status, body = http_read(s)
    if status != 200:
        raise ConnectionError("status %d" % status)
    if body != random.Random(seed).randbytes(n):
        raise Corrupt("GET body differs")


def http_post(s, opid, host):
    s.sendall(b"POST /op/%s HTTP/1.1\r\nHost: %s\r\nContent-Length: 2\r\n"
              b"\r\nx\n" % (opid.encode(), host.encode()))
    status, body = http_read(s)
    if status != 200:
        raise ConnectionError("status %d" % status)
    if body != b"done %s\n" % opid.encode():
        raise Corrupt("POST answered for another op: %r" % body[:60])


def redis_op(s, rng, key):
    val = rng.randbytes(size(rng, 65536)).hex().encode()
    # A key of this operation's own: a SET the client gave up on (its
    # read timed out while the server was frozen) still lands when the
    # server thaws, and must not overwrite the value a later one checks.
    k = ("%s-%d" % (key, rng.randrange(1 << 40))).encode()
    s.sendall(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (
        len(k), k, len(val), val))
    if recv_exact(s, 5) != b"+OK\r\n":
        raise Corrupt("SET answer")
    s.sendall(b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(k), k))
    want = b"$%d\r\n%s\r\n" % (len(val), val)
    if recv_exact(s, len(want)) != want:
        raise Corrupt("GET value differs")


class Conns:
    """One connection per target, made on demand, dropped after an error
    and at random once in 40 operations (reconnects are what leaks would
    follow; at random rather than by age, so that a bare twin started with
    fresh connections reconnects as often as the client beside it)."""

    def __init__(self, timeout, rng):
        self.timeout, self.rng, self.socks = timeout, rng, {}

    def get(self, var):
        s = self.socks.get(var)
        if s is None or self.rng.random() < 1 / 40:
            self.drop(var)
            s = socket.create_connection(target(var), timeout=self.timeout)
            self.socks[var] = s
        return s

    def drop(self, var):
        s = self.socks.pop(var, None)
        if s is not None:
            s.close()


def one_op(conns, rng, opids, kinds, cap, rkey):
    kind = rng.choice(kinds)
    var = {"echo": "SOAK_ECHO", "get": "SOAK_WEB", "post": "SOAK_WEB",
           "post2": "SOAK_WEB2", "redis": "SOAK_REDIS"}[kind]
    try:
        s = conns.get(var)
        host = target(var)[0]
        if kind == "echo":
            echo_op(s, rng, cap)
        elif kind == "get":
            http_get(s, rng, host, cap)
        elif kind in ("post", "post2"):
            http_post(s, next(opids), host)
        else:
            redis_op(s, rng, rkey)
    except BaseException:
        conns.drop(var)
        raise


def opid_stream(name):
    n = 0
    while True:
        n += 1
        yield "%s-%d-%d" % (name, os.getpid(), n)


KINDS = ["echo", "echo", "echo", "get", "post", "post2"]


def loop_blocking(rec, name, life, alarm, seed, kinds, pause):
    """One thread's operations until life ends."""
    rng = random.Random(seed)
    conns = Conns(None if alarm else HUNG_S, random.Random(seed + 7))
    opids = opid_stream(name + "t%d" % seed)
    # A key of this process's own: a bare twin draws the same seeds.
    rkey = "%s-%d-k%d" % (name, os.getpid(), seed)
    end = time.monotonic() + life
    while time.monotonic() < end:
        t0 = time.monotonic()
        try:
            if alarm:
                signal.setitimer(signal.ITIMER_REAL, HUNG_S)
            one_op(conns, rng, opids, kinds, 1 << 20, rkey)
            if alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
            rec.add("ok", t0)
        except Hung:
            rec.add("hung", t0)
        except Corrupt as e:
            signal.setitimer(signal.ITIMER_REAL, 0) if alarm else None
            rec.add("corrupt", t0, e)
        except (OSError, ValueError, IndexError) as e:
            signal.setitimer(signal.ITIMER_REAL, 0) if alarm else None
            kind = "hung" if isinstance(e, socket.timeout) and \
                e.errno is None else "err"
            rec.add(kind, t0, e)
            time.sleep(0.2)
        time.sleep(rng.uniform(*pause))


def on_alarm(*_):
    raise Hung()


def run_single(rec, name, life):
    signal.signal(signal.SIGALRM, on_alarm)
    loop_blocking(rec, name, life, True, 1, KINDS, (0.02, 0.1))


def run_threads(rec, name, life):
    kinds = KINDS + ["redis", "redis"]
    ts = [threading.Thread(target=loop_blocking, daemon=True,
                           args=(rec, name, life, False, 100 + i, kinds,
                                 (0.05, 0.3)))
          for i in range(16)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


# --- asyncio: 200 echo connections in one loop ----------------------------

async def async_conn(rec, i, end):
    rng = random.Random(1000 + i)
    host, port = target("SOAK_ECHO")
    r = w = None
    await asyncio.sleep(rng.uniform(0, 2))
    while time.monotonic() < end:
        t0 = time.monotonic()
        try:
            if w is None or rng.random() < 1 / 30:
                w = drop(w)
                r, w = await asyncio.wait_for(
                    asyncio.open_connection(host, port), HUNG_S)
            body = rng.randbytes(size(rng, 65536))
            frame = struct.pack("!I", len(body)) + body
            w.write(frame)
            await asyncio.wait_for(w.drain(), HUNG_S)
            got = await asyncio.wait_for(r.readexactly(len(frame)),
                                         HUNG_S - (time.monotonic() - t0))
            if got != frame:
                raise Corrupt("echo reply differs")
            rec.add("ok", t0)
        except asyncio.TimeoutError as e:
            # Python 3.11 made asyncio's TimeoutError the built-in one,
            # which a read the library timed out (ETIMEDOUT) raises too:
            # only the client's own wait_for, with no errno, is a hang.
            rec.add("hung" if e.errno is None else "err", t0, e)
            w = drop(w)
        except Corrupt as e:
            rec.add("corrupt", t0, e)
            w = drop(w)
        except (OSError, asyncio.IncompleteReadError, ValueError) as e:
            rec.add("err", t0, e)
            w = drop(w)
        # Idle for less than the policy's read_timeout (2 s): asyncio
        # waits for readability all the time, and SPEC 6 ends such a wait
        # after read_timeout without a byte, idle connection or not.
        await asyncio.sleep(rng.uniform(0.3, 1.5))
    drop(w)


def drop(w):
    if w is not None:
        w.close()
    return None


async def loop_lag(path, end):
    """Appends "SEC LAG_MS" to path whenever this loop ran a 100-ms timer
    more than 500 ms late: a read timeout reported then may be one the
    client, not the server, was too starved to see answered."""
    while time.monotonic() < end:
        t = time.monotonic()
        await asyncio.sleep(0.1)
        late = time.monotonic() - t - 0.1
        if late > 0.5:
            with open(path, "a") as f:
                f.write("%d %d\n" % (time.time(), late * 1000))


async def run_async(rec, life):
    end = time.monotonic() + life
    await asyncio.gather(loop_lag(rec.f.name + ".lag." + rec.mode, end),
                         *(async_conn(rec, i, end) for i in range(200)))


def run_once(kind, name):
    """One operation; the exit status says how it ended: 0 ok, 1 err,
    3 corrupt (the stream's runner counts it, and hung by its own bound)."""
    try:
        one_op(Conns(HUNG_S, random.Random()), random.Random(),
               opid_stream(name), [kind],
               1 << 16, "once")
        return 0
    except Corrupt as e:
        print("corrupt:", e, file=sys.stderr)
        return 3
    except (OSError, ValueError, IndexError) as e:
        print("error:", why(e), e, file=sys.stderr)
        return 1


def main():
    how, name, mode, out = sys.argv[1:5]
    if how == "once":
        sys.exit(run_once(sys.argv[5], name))
    rec = Recorder(name, mode, out)

    def stop(*_):
        rec.flush(True)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    life = float(sys.argv[5])
    if how == "single":
        run_single(rec, name, life)
    elif how == "threads":
        run_threads(rec, name, life)
    else:
        asyncio.run(run_async(rec, life))
    rec.flush(True)


if __name__ == "__main__":
    main()
