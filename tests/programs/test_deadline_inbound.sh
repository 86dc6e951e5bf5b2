#!/bin/sh
# SPDX-License-Identifier: MIT
# test_deadline_inbound.sh - the inbound half of SPEC 10 at its edges: an
# unmodified service (chain_service.py, ThreadingHTTPServer) started with
# `inbound_deadline: X-Request-Deadline` and `inbound_deadline_max: 1s`
# calls a silent backend; requests come from a bare curl:
#   already expired   (X-Request-Deadline: 1000) its connect fails at once
#                     with ETIMEDOUT, < 150 ms + RS_SLACK_MS after the request,
#                     and the backend sees no connection;
#   far in the future (year 33658, or a skewed clock) clamped to 1 s: it
#                     gives up >= 1000 ms and < 1000 + 300 + RS_SLACK_MS ms
#                     after the request;
#   not a number      ignored: no deadline (still waiting 1.5 s later).
# Loopback only.  About 8 s.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${RS_BUILD:-$PWD/build}
CLI=${RS_CLI:-$B/resolute}
. tests/programs/rsrun.sh
command -v python3 >/dev/null && command -v curl >/dev/null ||
	{ echo "SKIPPED: needs python3 and curl"; exit 0; }
slack=${RS_SLACK_MS:-0}
dir=$(mktemp -d)
pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; done; wait; rm -rf "$dir"; }
trap cleanup EXIT
cat >"$dir/p.yaml" <<'POL'
version: 1
inbound_deadline: X-Request-Deadline
inbound_deadline_max: 1s
POL
ev=$dir/events
mkfifo "$dir/r1" "$dir/r2"
# Both on ports of the kernel's choice: no other test's can collide.
timeout 30 python3 tests/programs/silent_backend.py 0 "$ev" 25 >"$dir/r1" &
pids="$pids $!"
read -r l1 bport <"$dir/r1"
# (rsrun_exec: $! is the service itself, which cleanup must stop.)
(RESOLUTE_LOG=info RESOLUTE_LOG_FILE=$dir/rs.log rsrun_exec \
    --policy "$dir/p.yaml" -- timeout 30 python3 tests/programs/chain_service.py C 0 0 \
    "http://127.0.0.1:${bport:-0}/" "$ev") >"$dir/r2" &
pids="$pids $!"
read -r l2 port <"$dir/r2"
[ "$l1$l2" = readyready ] && [ -n "$port" ] ||
	{ echo "FAIL: services did not start"; exit 1; }
fails=0
# case NAME HEADER-VALUE WAIT-S PYTHON-CHECK over d (ms from recv to
# gave_up, or None) and conns (backend connections in this case).
case_() {
	: >"$ev"
	timeout 5 curl -sS -m "$3" -o /dev/null -H "X-Request-Deadline: $2" \
	    "http://127.0.0.1:$port/" 2>/dev/null
	sleep 0.3
	if python3 - "$ev" "$4" <<'PY'
import sys
ev = [l.split() for l in open(sys.argv[1])]
recv = [int(e[0]) for e in ev if e[2] == "recv"]
gave = [int(e[0]) for e in ev if e[2] == "gave_up"]
d = gave[0] - recv[0] if recv and gave else None
conns = sum(1 for e in ev if e[1] == "backend")
print("   d=%s conns=%d" % (d, conns))
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
	then echo "ok: $1"; else echo "FAIL: $1"; fails=$((fails + 1)); fi
}
case_ "already expired: fails at once, no connection" 1000 2 \
    "d is not None and d < 150 + $slack and conns == 0"
case_ "far future: clamped to inbound_deadline_max (1s)" 999999999999999 3 \
    "d is not None and 1000 <= d < 1300 + $slack and conns == 1"
case_ "not a number: ignored" soon 1.5 "d is None and conns == 1"
grep -q 'deadline passed .* ms ago, from X-Request-Deadline on fd' "$dir/rs.log" ||
	{ echo "FAIL: no log line for the expired request"; fails=$((fails + 1)); }
grep -q 'deadline [0-9]* ms left, from X-Request-Deadline on fd' "$dir/rs.log" ||
	{ echo "FAIL: no log line for the clamped request"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ] && echo "PASS: test_deadline_inbound" && exit 0
cat "$dir/rs.log"
echo "FAIL: test_deadline_inbound ($fails)"
exit 1
