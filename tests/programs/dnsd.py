#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""dnsd.py - a tiny DNS responder for the DNS-retry tests (SPEC 5d).

    dnsd.py ADDR [--fail-ms MS] [--mode servfail|silent] [--life S] NAME=IPV4...

Answers UDP queries on ADDR port 53.  For FAIL_MS milliseconds from the
first query (and again after each SIGUSR1) every query gets SERVFAIL (or,
with --mode silent, no answer at all); after that, NAME gets an A record
with its address, other types of NAME an empty NOERROR answer, and every
other name NXDOMAIN.  NAME=IP1,IP2,... gets one A record per address, in that order.
NAME=servfail is always answered SERVFAIL;
NAME=slowfail:MS too, MS milliseconds after the query.  Prints "ready" once bound and a line per query to
standard error, "<epoch_ms> query NAME type T servfail|silent|answer"; exits after LIFE seconds (default 60) so that a test that
forgets it cannot leave it running.
"""
import signal
import socket
import struct
import sys
import time


def parse_args(argv):
    opts = {"fail_ms": 0, "mode": "servfail", "life": 60.0, "names": {}}
    addr, i = argv[1], 2
    while i < len(argv):
        a = argv[i]
        if a == "--fail-ms":
            opts["fail_ms"], i = int(argv[i + 1]), i + 2
        elif a == "--mode":
            opts["mode"], i = argv[i + 1], i + 2
        elif a == "--life":
            opts["life"], i = float(argv[i + 1]), i + 2
        else:
            name, ip = a.split("=", 1)
            opts["names"][name.lower().rstrip(".")] = ip
            i += 1
    return addr, opts


def question(msg):
    """Returns (name, qtype, end offset) of the first question."""
    labels, off = [], 12
    while msg[off]:
        n = msg[off]
        labels.append(msg[off + 1:off + 1 + n].decode("ascii", "replace"))
        off += 1 + n
    qtype, _ = struct.unpack("!HH", msg[off + 1:off + 5])
    return ".".join(labels).lower(), qtype, off + 5


def reply(msg, rcode, answers=()):
    qid, flags = struct.unpack("!HH", msg[:4])
    _, _, end = question(msg)
    flags = 0x8000 | (flags & 0x7900) | 0x0080 | rcode
    head = struct.pack("!HHHHHH", qid, flags, 1, len(answers), 0, 0)
    body = msg[12:end]
    for a in answers:
        body += struct.pack("!HHHIH", 0xC00C, 1, 1, 0, 4) + a
    return head + body


def main():
    addr, opts = parse_args(sys.argv)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, 53))
    s.settimeout(0.2)
    state = {"t0": None}

    def rearm(*_):
        state["t0"] = None

    signal.signal(signal.SIGUSR1, rearm)
    print("ready", flush=True)
    end = time.monotonic() + opts["life"]
    while time.monotonic() < end:
        try:
            msg, peer = s.recvfrom(4096)
        except socket.timeout:
            continue
        if len(msg) < 17:
            continue
        name, qtype, _ = question(msg)
        now = time.monotonic()
        if state["t0"] is None:
            state["t0"] = now
        slow = opts["names"].get(name, "")
        if slow.startswith("slowfail:"):
            time.sleep(int(slow.split(":")[1]) / 1000.0)
            s.sendto(reply(msg, 2), peer)
            continue
        failing = (now - state["t0"]) * 1000 < opts["fail_ms"] or \
            opts["names"].get(name) == "servfail"
        print("%d query %s type %d %s" % (time.time() * 1000, name, qtype,
              opts["mode"] if failing else "answer"),
              file=sys.stderr, flush=True)
        if failing:
            if opts["mode"] == "servfail":
                s.sendto(reply(msg, 2), peer)
            continue
        ip = opts["names"].get(name)
        if ip is None:
            s.sendto(reply(msg, 3), peer)
        elif qtype == 1:
            s.sendto(reply(msg, 0, [socket.inet_aton(a)
                                    for a in ip.split(",")]), peer)
        else:
            s.sendto(reply(msg, 0), peer)


if __name__ == "__main__":
    main()
