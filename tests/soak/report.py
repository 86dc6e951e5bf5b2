#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""report.py - the soak's table, checks and plot (tests/soak/run.sh).

    report.py DIR OUT SECONDS

Reads what the soak wrote in DIR (ops, faults, samples, logs/, ledger,
arrivals, faults-left, asan.*/ubsan.*), prints the tables to standard
output and OUT/report.txt, draws OUT/soak.svg, and exits 1 when one of the
checks fails:

  - zero corrupt and zero hung operations under the library;
  - no POST executed twice (the ledger), and no keyless POST arrived twice;
  - the library keeps at least as large a share of operations alive as
    bare, and a larger one under restarts and dropped SYNs;
  - every long-lived process under the library flat from the first quarter
    on: the least-squares growth of descriptors, epoll records and RSS over
    the rest of the run within BOUNDS;
  - shared segments: at most 2 files, 8 MiB, 8 rule rows, none added after
    the first quarter;
  - log lines per fault window at most 12 per operation of the window
    plus 200 (no storm);
  - every fault undone at the end; no sanitizer report.
"""
import bisect
import collections
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import svg  # noqa: E402

# name: (absolute, relative to the median) growth allowed after the first
# quarter, whichever is larger.
BOUNDS = {"fds": (8, 0.10), "epoll": (8, 0.10), "rss_kb": (16384, 0.10)}
FAULT_COLORS = {"restart": "#f4a6a6", "drop": "#f7c98b", "frozen": "#a6c8f4",
                "rst": "#e0a6f4", "trickle": "#c9e6a1", "dns": "#f4f0a6",
                "dead": "#c8c8c8", "quiet": "#ffffff"}
LINES = []
FAILS = []
STARTS = []     # the fault windows' start times, for bisect
# A second's operations count in the window holding its end: the failures
# a fault causes in the second it begins belong to it, not to the calm
# before it.
AT = 0.999
LONG = ("single", "threads", "async")
FAULT_ORDER = ("restart", "dead", "drop", "frozen", "rst", "trickle", "dns",
               "quiet")
SANITIZED = os.environ.get("SOAK_ASAN") == "1"


def say(s=""):
    LINES.append(s)
    print(s)


def check(ok, what):
    say(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        FAILS.append(what)


def read_ops(d):
    ops, errors = [], {}
    try:
        f = open(os.path.join(d, "ops"))
    except OSError:
        return ops, errors
    for line in f:
        w = line.split(None, 3)
        if line.startswith("# errors"):
            e = errors.setdefault(w[2], collections.Counter())
            e.update(json.loads(w[3]))
        elif len(w) == 4:
            n = line.split()
            ops.append((int(n[0]), n[1], n[2], [int(x) for x in n[3:7]]))
    return ops, errors


def read_faults(d):
    out = []
    try:
        with open(os.path.join(d, "faults")) as f:
            for line in f:
                t0, t1, name, cycle, phase = line.split()
                out.append((int(t0) / 1000.0, int(t1) / 1000.0, name,
                            int(cycle), phase))
    except OSError:
        pass
    return out


def window_at(faults, t):
    """The (fault, phase) of the window holding time t."""
    i = bisect.bisect_right(STARTS, t) - 1
    if i >= 0 and t < faults[i][1]:
        return faults[i][2], faults[i][4]
    return "setup", "lib"


def window_index(faults, t):
    i = bisect.bisect_right(STARTS, t) - 1
    return i if i >= 0 and t < faults[i][1] else None


def kept(c):
    total = sum(c)
    return 100.0 * c[0] / total if total else float("nan")


def outcome_table(ops):
    say("Operations by outcome (ok, failed with an error, corrupt, hung "
        "beyond their deadline)")
    say("%-9s %-5s %9s %8s %8s %6s %7s" % ("client", "mode", "ok", "err",
                                           "corrupt", "hung", "kept%"))
    by = collections.defaultdict(lambda: [0, 0, 0, 0])
    for _, name, mode, c in ops:
        for k in ((name, mode), ("total", mode)):
            by[k] = [a + b for a, b in zip(by[k], c)]
    for (name, mode) in sorted(by, key=lambda k: (k[0] == "total", k)):
        c = by[(name, mode)]
        say("%-9s %-5s %9d %8d %8d %6d %6.1f%%" % (name, mode, *c, kept(c)))
    return by


def fault_table(ops, faults):
    say("")
    say("By fault: kept alive (ok / all) under the library and bare, and ok "
        "operations of the long-lived clients beside their bare twins in "
        "the same windows (bare cycles)")
    say("%-8s %9s %7s %9s %7s %10s %10s" % (
        "fault", "lib ops", "lib%", "bare ops", "bare%", "twins lib",
        "twins bare"))
    by = collections.defaultdict(lambda: [0, 0, 0, 0])
    twins = collections.Counter()
    for sec, name, mode, c in ops:
        f, phase = window_at(faults, sec + AT)
        by[(f, mode)] = [a + b for a, b in zip(by[(f, mode)], c)]
        if phase == "bare" and name in LONG:
            twins[(f, mode)] += c[0]
    for f in FAULT_ORDER:
        lib, bare = by[(f, "lib")], by[(f, "bare")]
        say("%-8s %9d %6.1f%% %9d %6.1f%% %10d %10d" % (
            f, sum(lib), kept(lib), sum(bare), kept(bare),
            twins[(f, "lib")], twins[(f, "bare")]))
    return by, twins


def error_table(d, faults):
    """The commonest reasons of failed operations, per fault and mode."""
    by = collections.defaultdict(collections.Counter)
    try:
        with open(os.path.join(d, "ops.errors")) as f:
            for line in f:
                w = line.split()
                if len(w) >= 5:
                    fault, _ = window_at(faults, int(w[0]) + AT)
                    by[(fault, w[2])]["%s %s" % (w[1], w[4])] += 1
    except OSError:
        return
    say("")
    say("Commonest failures by fault (client reason: count)")
    for f in FAULT_ORDER:
        for mode in ("lib", "bare"):
            top = by[(f, mode)].most_common(4)
            if top:
                say("  %-8s %-4s %s" % (f, mode, ", ".join(
                    "%s: %d" % kv for kv in top)))


def duplicates(d):
    executed = collections.Counter()
    keyless = collections.Counter()
    keyed = collections.Counter()
    for name, counter, idx in (("ledger", executed, 0),):
        try:
            with open(os.path.join(d, name)) as f:
                for line in f:
                    counter[line.split()[idx]] += 1
        except OSError:
            pass
    try:
        with open(os.path.join(d, "arrivals")) as f:
            for line in f:
                opid, key, _ = line.split()
                (keyless if key == "-" else keyed)[
                    opid if key == "-" else key] += 1
    except OSError:
        pass
    twice = sum(1 for n in executed.values() if n > 1)
    kl_twice = sum(1 for n in keyless.values() if n > 1)
    replays = sum(n - 1 for n in keyed.values())
    say("")
    say("POSTs: %d executed, %d keyless arrivals, %d keyed arrivals "
        "(%d of them replays of a key)" % (
            len(executed), sum(keyless.values()), sum(keyed.values()),
            replays))
    check(twice == 0, "no POST executed twice (%d were)" % twice)
    check(kl_twice == 0, "no keyless POST arrived twice (%d did)" % kl_twice)


def fit(points):
    n = len(points)
    if n < 3:
        return 0.0
    mt = sum(t for t, _ in points) / n
    mv = sum(v for _, v in points) / n
    den = sum((t - mt) ** 2 for t, _ in points)
    return sum((t - mt) * (v - mv) for t, v in points) / den if den else 0.0


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else 0


def read_samples(d):
    procs = collections.defaultdict(list)
    shm = []
    try:
        with open(os.path.join(d, "samples")) as f:
            for line in f:
                w = line.split()
                if w[1] == "proc":
                    procs[w[2]].append((float(w[0]), int(w[3]), int(w[4]),
                                        int(w[5])))
                elif w[1] == "shm":
                    shm.append((float(w[0]), int(w[2]), int(w[3]), int(w[4])))
    except OSError:
        pass
    return procs, shm


def resources(procs, shm):
    say("")
    say("Long-lived processes under the library, from the first quarter on "
        "(least-squares growth over that span; bound: the larger of the "
        "absolute and relative allowance; under 10 minutes, twice the "
        "absolute one or the median)")
    say("%-8s %-6s %9s %9s %9s %10s %9s %10s" % (
        "process", "what", "q1 median", "end", "max", "growth", "bound",
        "per hour"))
    for name in sorted(procs):
        s = procs[name]
        if len(s) < 4:
            say("%-8s too few samples (%d)" % (name, len(s)))
            continue
        t0, t1 = s[0][0], s[-1][0]
        q = t0 + (t1 - t0) / 4
        rest = [x for x in s if x[0] >= q]
        for i, what in ((1, "fds"), (3, "epoll"), (2, "rss_kb")):
            pts = [(x[0], x[i]) for x in rest]
            med = median([v for _, v in pts])
            growth = fit(pts) * (t1 - q)
            a, r = BOUNDS[what]
            bound = max(a, r * med)
            if t1 - t0 < 600:
                # Too short for a slope to mean a leak: a coarse bound.
                bound = max(2 * a, med)
            ok = growth <= bound
            say("%-8s %-6s %9d %9d %9d %10.1f %9.0f %10.1f %s" % (
                name, what, median([x[i] for x in s if x[0] < q] or [0]),
                pts[-1][1], max(v for _, v in pts), growth, bound,
                fit(pts) * 3600, "" if ok else "GROWS"))
            if not ok:
                FAILS.append("%s %s grows by %.0f (bound %.0f)" % (
                    name, what, growth, bound))
    if not shm:
        check(False, "shared segments sampled")
        return
    q = shm[0][0] + (shm[-1][0] - shm[0][0]) / 4
    at_q = [x for x in shm if x[0] >= q][0]
    files, size, rules = (max(x[i] for x in shm) for i in (1, 2, 3))
    say("")
    say("Shared segments in /dev/shm: at most %d files, %d bytes, %d rule "
        "rows (after the first quarter: %d files, %d bytes; at the end: "
        "%d files, %d bytes)" % (files, size, rules, at_q[1], at_q[2],
                                 shm[-1][1], shm[-1][2]))
    check(files <= 2 and size <= 8 << 20 and 0 <= rules <= 8,
          "shared segments bounded (<= 2 files, 8 MiB, 8 rule rows)")
    check(shm[-1][1:3] == at_q[1:3],
          "no segment added or grown after the first quarter")


def log_storms(d, ops, faults):
    lines = collections.Counter()
    for path in glob.glob(os.path.join(d, "logs", "*.log")):
        with open(path, errors="replace") as f:
            for line in f:
                try:
                    i = window_index(faults, json.loads(line)["ts"] / 1e3)
                except (ValueError, KeyError):
                    continue
                if i is not None:
                    lines[i] += 1
    per = collections.Counter()
    for sec, _, mode, c in ops:
        i = window_index(faults, sec + AT)
        if mode == "lib" and i is not None:
            per[i] += sum(c)
    worst, worst_i = 0.0, None
    by_fault = collections.defaultdict(list)
    storm = []
    for i, f in enumerate(faults):
        n, o = lines[i], per[i]
        by_fault[f[2]].append(n)
        if n > 12 * o + 200:
            storm.append("%s at %.0f: %d lines for %d ops" % (
                f[2], f[0], n, o))
        if n / max(o, 1) > worst:
            worst, worst_i = n / max(o, 1), i
    say("")
    say("Library log lines per fault window (all library processes): " +
        ", ".join("%s max %d" % (k, max(v)) for k, v in by_fault.items()))
    if worst_i is not None:
        say("  most per operation: %.2f (%s)" % (worst, faults[worst_i][2]))
    check(not storm, "no log storm (<= 12 lines per operation + 200 per "
          "window)" + ("; " + "; ".join(storm[:3]) if storm else ""))


def plot(out, ops, faults, procs):
    if not ops:
        return
    t0 = min(s for s, _, _, _ in ops)
    t1 = max(s for s, _, _, _ in ops)
    step = 10 if t1 - t0 > 600 else 2
    rate = collections.defaultdict(lambda: [0, 0, None, None])
    for sec, _, mode, c in ops:
        b = sec - (sec - t0) % step
        r = rate[b]
        i = 0 if mode == "lib" else 2
        r[i] = (r[i] or 0) + c[0] / step
        r[i + 1] = (r[i + 1] or 0) + (c[1] + c[2] + c[3]) / step
    # The first and last buckets hold part of their seconds only.
    bs = sorted(rate)[1:-1]
    p = svg.Plot(1100, t0, t1)
    p.title("resolute soak: %.0f minutes of faults rotating; bare twins "
            "in one cycle of three (bare lines there only)" % (
                (t1 - t0) / 60))
    bands = [(a, b, FAULT_COLORS.get(n, "#eee")) for a, b, n, _, _ in faults]
    p.legend([(n, c) for n, c in FAULT_COLORS.items() if n != "quiet"])
    p.panel("operations per second", [
        ("library ok", "#2ca02c", [(b, rate[b][0]) for b in bs]),
        ("library failed", "#d62728", [(b, rate[b][1]) for b in bs]),
        ("bare ok", "#1f77b4", [(b, rate[b][2]) for b in bs]),
        ("bare failed", "#ff7f0e", [(b, rate[b][3]) for b in bs])], bands)
    names = sorted(procs)
    p.panel("descriptors per process (library)", [
        (n, svg.COLORS[i % 8], [(s[0], s[1]) for s in procs[n]])
        for i, n in enumerate(names)])
    p.panel("RSS per process, MiB (library)", [
        (n, svg.COLORS[i % 8], [(s[0], s[2] / 1024.0) for s in procs[n]])
        for i, n in enumerate(names)])
    p.panel("epoll records per process (library)", [
        (n, svg.COLORS[i % 8], [(s[0], s[3]) for s in procs[n]])
        for i, n in enumerate(names)], height=110)
    p.axis()
    p.write(os.path.join(out, "soak.svg"))


def main():
    d, out, seconds = sys.argv[1], sys.argv[2], sys.argv[3]
    ops, _ = read_ops(d)
    faults = read_faults(d)
    procs, shm = read_samples(d)
    cycles = len({f[3] for f in faults})
    say("soak: %s s asked, %d fault windows in %d cycles (%d bare)" % (
        seconds, len(faults), cycles,
        len({f[3] for f in faults if f[4] == "bare"})))
    say("")
    by = outcome_table(ops)
    STARTS.extend(f[0] for f in faults)
    fb, twins = fault_table(ops, faults)
    error_table(d, faults)
    say("")
    outcomes(by, fb, twins)
    duplicates(d)
    if SANITIZED:
        resources({}, shm)
    else:
        resources(procs, shm)
    log_storms(d, ops, faults)
    finish(d, out, ops, faults, procs)


def outcomes(by, fb, twins):
    lib, bare = by[("total", "lib")], by[("total", "bare")]
    check(sum(lib) > 0, "operations under the library (%d)" % sum(lib))
    check(lib[2] == 0, "zero corrupt under the library (%d)" % lib[2])
    check(lib[3] == 0, "zero hung under the library (%d)" % lib[3])
    if SANITIZED:
        say("(a sanitizer run: the library against bare and the resource "
            "slopes, with the sanitizer's quarantine in RSS, are the plain "
            "run's to check)")
        return
    check(sum(bare) > 0, "operations bare (%d)" % sum(bare))
    check(bare[2] == 0, "zero corrupt bare (%d): the servers and clients "
          "themselves are right" % bare[2])
    check(kept(lib) >= kept(bare), "library keeps at least as many alive "
          "as bare: %.1f%% vs %.1f%%" % (kept(lib), kept(bare)))
    a, b = fb[("restart", "lib")], fb[("restart", "bare")]
    check(kept(a) > kept(b), "library keeps a larger share alive under "
          "restarts: %.1f%% vs %.1f%%" % (kept(a), kept(b)))
    a, b = fb[("dead", "lib")], fb[("dead", "bare")]
    check(kept(a) > kept(b), "library keeps a larger share alive when "
          "one address of a name drops SYNs: %.1f%% vs %.1f%%" % (
              kept(a), kept(b)))
    a, b = fb[("drop", "lib")], fb[("drop", "bare")]
    say("      (every address dropping SYNs: no retry can connect; the "
        "library ends a connect by its budget, bare waits for the "
        "kernel's SYN retransmissions: %.1f%% vs %.1f%% kept, %d vs %d "
        "hung)" % (kept(a), kept(b), a[3], b[3]))


def finish(d, out, ops, faults, procs):
    say("")
    try:
        left = open(os.path.join(d, "faults-left")).read().strip()
    except OSError:
        left = "faults-left not written"
    check(not left, "every fault undone at the end" +
          (" (" + left + ")" if left else ""))
    reports = glob.glob(os.path.join(d, "asan.*")) + \
        glob.glob(os.path.join(d, "ubsan.*"))
    for r in reports:
        say("---- sanitizer report %s:" % r)
        say(open(r, errors="replace").read()[:4000])
    check(not reports, "no sanitizer report (%d)" % len(reports))
    plot(out, ops, faults, procs)
    say("")
    say("plot: %s" % os.path.join(out, "soak.svg"))
    say("soak: %s" % ("FAILED: " + "; ".join(FAILS) if FAILS else
                      "all checks passed"))
    with open(os.path.join(out, "report.txt"), "w") as f:
        f.write("\n".join(LINES) + "\n")
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
