#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""deadline_timeline.py OUTDIR [--check bare|library|pool] [--slack MS]

Reads what scripts/deadline-chain.sh left in OUTDIR and prints the chain's
timeline: each event in ms relative to the client's deadline (the value A
received in X-Request-Deadline).  With --check, asserts the behaviour of
that mode (SPEC 10) and exits 1 on the first failure:

  library: the client failed (timed out, or got A's 502) at its deadline; B and C gave up on their
           downstream calls at the deadline (>= it, < it + 150 + slack)
           and within 100 + slack ms of each other; no request reached a
           hop or the backend after the deadline.
  fork:    the same, with B a process-per-request server.
  bare:    C was still waiting on the backend when the run ended (2 s or
           more after the deadline): orphaned work.
  pool:    B's worker thread is not bound: C got no deadline header, B's
           call completed after the deadline, and B answered normally.
"""
import os
import re
import sys


def load(out):
    ev = []
    if not os.path.exists(os.path.join(out, "events")):
        fail("no events: no request reached A (see the client's log)")
    with open(os.path.join(out, "events")) as f:
        for line in f:
            parts = line.split(None, 3)
            if len(parts) >= 3:
                ev.append((int(parts[0]), parts[1], parts[2],
                           parts[3].strip() if len(parts) > 3 else ""))
    ev.sort()
    deadline = None
    for t, who, what, rest in ev:
        m = re.match(r"deadline=(\d+)", rest)
        if who == "A" and what == "recv" and m:
            deadline = int(m.group(1))
    return ev, deadline


def first(ev, who, what):
    for e in ev:
        if e[1] == who and e[2] == what:
            return e[0]
    return None


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check_library(ev, d, client, slack, budget):
    # The client's own read times out at the deadline, or A's 502 (A gave
    # up at the same instant) gets there first: an error either way.
    m = re.search(r"code=(\d+) exit=(\d+) elapsed_ms=(\d+)", client)
    if not m or (m.group(1) == "200" and m.group(2) == "0"):
        fail("the client did not fail: " + client)
    if not budget - 50 <= int(m.group(3)) < budget + 300 + slack:
        fail("client gave up after %s ms, expected ~%d" % (m.group(3),
             budget))
    b, c = first(ev, "B", "gave_up"), first(ev, "C", "gave_up")
    if b is None or c is None:
        fail("B or C never gave up (B %s, C %s)" % (b, c))
    for who, t in (("B", b), ("C", c)):
        if not d <= t < d + 150 + slack:
            fail("%s gave up at %+d ms from the deadline" % (who, t - d))
    if abs(b - c) > 100 + slack:
        fail("B and C gave up %d ms apart" % abs(b - c))
    for t, who, what, _ in ev:
        if what in ("recv", "conn") and t >= d:
            fail("%s got a request %d ms after the deadline" % (who, t - d))


def check_bare(ev, d, end):
    if first(ev, "backend", "conn") is None:
        fail("C never reached the backend")
    # Only what happened before the run ended counts: the teardown that
    # follows may end C's call too.
    ev = [e for e in ev if e[0] <= end]
    if first(ev, "C", "gave_up") is not None or first(ev, "C", "ok"):
        fail("C stopped waiting without the library")
    if end - d < 1500:
        fail("the run ended only %d ms after the deadline" % (end - d))


def check_pool(ev, d):
    recv = [e for e in ev if e[1] == "C" and e[2] == "recv"]
    if not recv or recv[0][3] != "deadline=-":
        fail("C got a deadline header from B's worker: %s" % recv)
    ok = first(ev, "B", "ok")
    if ok is None or ok < d:
        fail("B's worker call did not complete after the deadline")


def main():
    out = sys.argv[1]
    mode = sys.argv[sys.argv.index("--check") + 1] \
        if "--check" in sys.argv else None
    slack = int(sys.argv[sys.argv.index("--slack") + 1]) \
        if "--slack" in sys.argv else 0
    ev, d = load(out)
    client = open(os.path.join(out, "client")).read().strip()
    end = int(open(os.path.join(out, "t_end")).read())
    if d is None:
        fail("A got no X-Request-Deadline from the client")
    t0 = int(open(os.path.join(out, "t0")).read())
    print("  client: %s (deadline at %+d ms from start)" % (client, d - t0))
    for t, who, what, rest in ev:
        print("  %+6d ms  %-7s %s %s" % (t - d, who, what, rest[:60]))
    waiting = [w for w in ("A", "B", "C") if first(ev, w, "recv") and
               first(ev, w, "gave_up") is None and first(ev, w, "ok") is None]
    if waiting:
        print("  %+6d ms  still waiting: %s" % (end - d, " ".join(waiting)))
    if mode in ("library", "fork"):
        check_library(ev, d, client, slack, d - t0)
    elif mode == "bare":
        check_bare(ev, d, end)
    elif mode == "pool":
        check_pool(ev, d)
    if mode:
        print("ok: %s" % mode)


main()
