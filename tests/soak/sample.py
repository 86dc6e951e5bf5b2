#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sample.py - the soak's resource sampler.

    sample.py DIR CLI POLICY LIFE

Every 3 s until LIFE seconds have passed, for each long-lived process named
in DIR/pids ("NAME PID" lines; a name may be given again with a new pid),
appends to DIR/samples

    T proc NAME FDS RSS_KB EPOLL_RECORDS

(descriptors in /proc/PID/fd, VmRSS, and the registrations of its epoll
instances: "tfd:" lines of /proc/PID/fdinfo/N), and once per round

    T shm FILES BYTES RULES

the library's shared segments in /dev/shm (resolute-*: their number and
total size) and the rule rows `resolute stats` reads from them.  A
process's own tables (its descriptor table, epoll records, names) live in
its memory and have no reader; its RSS stands for them.
"""
import json
import os
import subprocess
import sys
import time


def procs(d):
    seen = {}
    try:
        with open(os.path.join(d, "pids")) as f:
            for line in f:
                w = line.split()
                if len(w) == 2:
                    seen[w[0]] = int(w[1])
    except OSError:
        pass
    return seen


def epoll_records(pid, fds):
    n = 0
    for fd in fds:
        try:
            if os.readlink("/proc/%d/fd/%s" % (pid, fd)) != \
                    "anon_inode:[eventpoll]":
                continue
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                n += sum(1 for line in f if line.startswith("tfd:"))
        except OSError:
            pass
    return n


def proc_line(name, pid):
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
        with open("/proc/%d/status" % pid) as f:
            rss = [int(line.split()[1]) for line in f
                   if line.startswith("VmRSS:")][0]
    except (OSError, IndexError):
        return None
    return "proc %s %d %d %d" % (name, len(fds), rss, epoll_records(pid, fds))


def shm_line(cli, policy):
    files = [f for f in os.listdir("/dev/shm") if f.startswith("resolute-")]
    size = 0
    for f in files:
        try:
            size += os.stat(os.path.join("/dev/shm", f)).st_size
        except OSError:
            pass
    rules = 0
    try:
        out = subprocess.run([cli, "stats", "--policy", policy, "--format",
                              "json"], capture_output=True, timeout=10).stdout
        for seg in json.loads(out or b"{}").get("segments", []):
            rules += len(seg.get("rules", []))
    except (subprocess.SubprocessError, OSError, ValueError):
        rules = -1
    return "shm %d %d %d" % (len(files), size, rules)


def main():
    d, cli, policy, life = sys.argv[1], sys.argv[2], sys.argv[3], \
        float(sys.argv[4])
    end = time.monotonic() + life
    with open(os.path.join(d, "samples"), "a") as out:
        while time.monotonic() < end:
            t = time.time()
            lines = [proc_line(n, p) for n, p in procs(d).items()]
            lines.append(shm_line(cli, policy))
            for line in lines:
                if line:
                    out.write("%.1f %s\n" % (t, line))
            out.flush()
            time.sleep(3)


if __name__ == "__main__":
    main()
