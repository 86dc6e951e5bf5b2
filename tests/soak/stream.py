#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""stream.py - the soak's short-lived processes and benchmark bursts.

    stream.py DIR LIFE

Until LIFE seconds have passed, runs one short-lived client after another
(curl GET and POST, over HTTPS too when SOAK_WEBS is set, curl through the
two-hop chain with a deadline, python3, psql, redis-cli), each bounded by SOAK_HUNG_S (timeout: hung), and, in a
second thread, a redis-benchmark or pgbench burst every 20 s.  Each is run
under the library or bare as DIR/phase says when it starts ("lib": with
SOAK_LIB preloaded and SOAK_POLICY, logging JSON to DIR/logs/stream.log).
Outcomes go to DIR/ops as clients.py's do, under the names "stream" and
"bursts".  A program that cannot start with SOAK_LIB's sanitizer runtime
(curl and psql under ASan, with or without the library) is left out, and
said so.
"""
import os
import random
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clients  # noqa: E402

D, LIFE = sys.argv[1], float(sys.argv[2])
HUNG_S = clients.HUNG_S
LIB = os.environ["SOAK_LIB"]
HERE = os.path.dirname(os.path.abspath(__file__))


class Reason(Exception):
    """What a short-lived process's end says, for the error counts."""


def env(mode, deadline_ms=0):
    e = dict(os.environ)
    for k in ("LD_PRELOAD", "RESOLUTE_DEADLINE"):
        e.pop(k, None)
    if mode == "lib":
        e.update(LD_PRELOAD=LIB, RESOLUTE_POLICY=os.environ["SOAK_POLICY"],
                 RESOLUTE_LOG_FORMAT="json",
                 RESOLUTE_LOG_FILE=os.path.join(D, "logs", "stream.log"))
        if deadline_ms:
            e["RESOLUTE_DEADLINE"] = str(int(time.time() * 1000) +
                                         deadline_ms)
    return e


def phase():
    try:
        with open(os.path.join(D, "phase")) as f:
            return f.read().strip() or "lib"
    except OSError:
        return "lib"


def usable(prog, arg):
    """False when prog cannot start with the sanitizer runtime alone."""
    if " " not in LIB:
        return True
    e = dict(os.environ, LD_PRELOAD=LIB.rsplit(" ", 1)[0])
    try:
        subprocess.run([prog, arg], env=e, timeout=5, capture_output=True,
                       check=True)
        return True
    except (subprocess.SubprocessError, OSError):
        print("stream: %s left out: does not start with the sanitizer "
              "runtime preloaded (without the library as well)" % prog,
              flush=True)
        return False


def hp(var):
    return os.environ[var]


def web_url(var, path):
    return "http://%s%s" % (hp(var), path)


class Stream:
    def __init__(self):
        self.n = 0
        self.rng = random.Random(7)
        self.kinds = []
        if usable("curl", "--version"):
            self.kinds += ["curl_get", "curl_post", "curl_post2", "chain"]
            if os.environ.get("SOAK_WEBS"):
                self.kinds += ["curl_tls_get", "curl_tls_post"]
        self.kinds += ["py_echo", "py_get", "py_post", "redis_cli"]
        if usable("psql", "--version"):
            self.kinds += ["psql"]

    def command(self, kind):
        """Returns (argv, expected stdout or None, deadline in ms)."""
        self.n += 1
        opid = "stream-%d-%d" % (os.getpid(), self.n)
        seed, size = self.rng.randrange(1 << 30), self.rng.randrange(1, 65536)
        want = random.Random(seed).randbytes(size)
        if kind == "curl_get":
            return (["curl", "-sSf", web_url("SOAK_WEB", "/data/%d/%d" % (
                seed, size))], want, 0)
        if kind in ("curl_post", "curl_post2"):
            var = "SOAK_WEB" if kind == "curl_post" else "SOAK_WEB2"
            return (["curl", "-sSf", "--data-binary", "x", web_url(
                var, "/op/" + opid)], b"done %s\n" % opid.encode(), 0)
        if kind == "curl_tls_get":
            return (["curl", "-sSf", "--cacert", os.environ["SOAK_TLS_CERT"],
                     "https://%s/data/%d/%d" % (hp("SOAK_WEBS"), seed, size)],
                    want, 0)
        if kind == "curl_tls_post":
            return (["curl", "-sSf", "--cacert", os.environ["SOAK_TLS_CERT"],
                     "--data-binary", "x", "https://%s/op/%s" % (
                         hp("SOAK_WEBS"), opid)],
                    b"done %s\n" % opid.encode(), 0)
        if kind == "chain":
            return (["curl", "-sS", "-f", "http://%s/" % hp("SOAK_CHAIN")],
                    random.Random(7).randbytes(5000), 4000)
        if kind.startswith("py_"):
            return ([sys.executable, os.path.join(HERE, "clients.py"),
                     "once", opid, "-", "/dev/null", kind[3:]], None, 0)
        if kind == "redis_cli":
            host, port = hp("SOAK_REDIS").rsplit(":", 1)
            return (["redis-cli", "-h", host, "-p", port, "ECHO", opid],
                    opid.encode() + b"\n", 0)
        host, port = hp("SOAK_PG").rsplit(":", 1)
        return (["psql", "-X", "-h", host, "-p", port, "-U", "postgres",
                 "-d", "postgres", "-Atc", "select 42"], b"42\n", 0)

    def one(self, rec):
        kind = self.kinds[self.n % len(self.kinds)]
        argv, want, deadline = self.command(kind)
        t0 = time.monotonic()
        try:
            p = subprocess.run(argv, env=env(rec.mode, deadline),
                               capture_output=True, timeout=HUNG_S)
        except subprocess.TimeoutExpired:
            rec.add("hung", t0, Reason(kind + ":hung"))
            return
        if p.returncode == 3 or (p.returncode == 0 and want is not None and
                                 p.stdout != want):
            rec.add("corrupt", t0, Reason(kind + ":corrupt"))
        elif p.returncode != 0:
            rec.add("err", t0, Reason("%s:exit%d" % (kind, p.returncode)))
        else:
            rec.add("ok", t0)


def burst(kind):
    if kind == "redis":
        host, port = hp("SOAK_REDIS").rsplit(":", 1)
        return ["redis-benchmark", "-h", host, "-p", port, "-q", "-n",
                "2000", "-c", "10", "-t", "ping,set,get"]
    host, port = hp("SOAK_PG").rsplit(":", 1)
    return ["pgbench", "-n", "-c", "4", "-j", "2", "-T", "2", "-h", host,
            "-p", port, "-U", "postgres", "postgres"]


def spinning(pid, looks=10, gap=0.1):
    """
    Whether pid never sleeps: runnable ("R") at every one of looks looks
    over looks * gap seconds.  Its CPU share would not tell: niced, on a
    loaded machine, a spinning process may get 2% of a CPU; a process
    waiting for input (epoll_wait, read) is "S" at almost every look.
    """
    for _ in range(looks):
        try:
            with open("/proc/%d/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        if state != "R":
            return False
        time.sleep(gap)
    return True


def connect_failed(pid):
    """Whether the library logged a connect of pid's as failed for good."""
    try:
        with open(os.path.join(D, "logs", "stream.log"), errors="replace") as f:
            tag = '"pid":%d,' % pid
            return any(tag in line and ('"give_up"' in line or
                                        '"budget_exhausted"' in line or
                                        '"breaker_open"' in line)
                       for line in f)
    except OSError:
        return False


def stuck_by_itself(p, said, mode):
    """
    Why a burst still running past its bound is its own error, or None.

    redis-benchmark has two ways of never ending after a connect of its own
    failed, bare as well: its first (blocking) connect says "Could not
    connect" and it waits for ever; a client whose non-blocking connect
    failed makes it spin at full CPU (cliWriteConn turns every write error
    into EAGAIN, which its writeHandler retries in an endless loop).  The
    second counts only where the failure is known: bare, any (the kernel's
    refusal); under the library, a connect the library logged as failed
    for that process.  Anything else is a hang.
    """
    if b"Could not connect" in said:
        return "stuck_after_error"
    if not spinning(p.pid):
        return None
    if mode == "lib" and not connect_failed(p.pid):
        return None
    return "spin_after_connect_error"


def bursts(rec, end, kinds):
    n = 0
    while kinds and time.monotonic() < end - 10:
        rec.mode = phase()
        kind = kinds[n % len(kinds)]
        n += 1
        t0 = time.monotonic()
        p = subprocess.Popen(burst(kind), env=env(rec.mode),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            so, se = p.communicate(timeout=HUNG_S + 5)
            out = so.decode(errors="replace").lower()
            if kind == "pg":
                bad = "number of failed transactions: 0 " not in out
            else:
                bad = "error" in out
            bad = bad or p.returncode != 0
            rec.add("err" if bad else "ok", t0,
                    Reason("%s:exit%d" % (kind, p.returncode)) if bad else None,
                    HUNG_S + 5)
        except subprocess.TimeoutExpired as e:
            said = (e.stdout or b"") + (e.stderr or b"")
            why = stuck_by_itself(p, said, rec.mode)
            p.kill()
            p.communicate()
            if why:
                rec.add("err", t0, Reason(kind + ":" + why), float("inf"))
            else:
                rec.add("hung", t0, Reason(kind + ":hung"))
        time.sleep(max(0.0, 20 - (time.monotonic() - t0)))


def main():
    out = os.path.join(D, "ops")
    end = time.monotonic() + LIFE
    srec = clients.Recorder("stream", "mixed", out)
    brec = clients.Recorder("bursts", "mixed", out)
    bkinds = [k for k, p in (("redis", "redis-benchmark"),
                             ("pg", "pgbench")) if usable(p, "--version")]
    st = Stream()
    t = threading.Thread(target=bursts, args=(brec, end, bkinds),
                         daemon=True)
    t.start()
    while time.monotonic() < end:
        srec.mode = phase()
        st.one(srec)
        time.sleep(0.2)
    srec.flush(True)
    t.join(HUNG_S + 10)
    brec.flush(True)


if __name__ == "__main__":
    main()
