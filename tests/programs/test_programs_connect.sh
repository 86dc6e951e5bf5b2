#!/bin/sh
# SPDX-License-Identifier: MIT
# test_programs_connect.sh - real programs' blocking connects under resolute.
#
# wget and python3 (urllib.request.urlopen without a timeout) both make a
# plain blocking connect().  Against a server that starts listening 0.7 s
# late, they fail on their own and succeed under the library (attempts 6);
# against a blackholed address (netns only) they fail inside the policy's
# window (connect_timeout 500ms, attempts 2, waits of 100 ms: 1100 ms)
# instead of hanging in the kernel's two-minute SYN retries.
#
# RS_BUILD and RS_LIB come from scripts/run-tests.sh.  Every command runs
# under `timeout 20`.  Prints "ok ..." / "FAIL ..." lines; exit 1 on failure.
set -u
: "${RS_BUILD:?set by scripts/run-tests.sh}"
RS_LIB=${RS_LIB:-$RS_BUILD/libresolute.so}
SLACK=$((300 + ${RS_SLACK_MS:-0}))
[ "$SLACK" -lt 300 ] && SLACK=300
# Program start-up (interpreter, dynamic linking) counts in the elapsed
# time measured from outside, on top of the policy's window.
STARTUP=500
BLACKHOLE=127.0.0.2
fails=0
pids=""
tmp=$(mktemp -d)

# shellcheck disable=SC2317  # called by the trap below
cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# shellcheck source=tests/programs/lib.sh
. "$(dirname "$0")/lib.sh"

# start_peer MODE ARG...: sets PORT once the peer has printed it.
start_peer() {
	"$RS_BUILD/itests/peer" "$@" -l 20000 >"$tmp/port" &
	pids="$pids $!"
	i=0
	while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	PORT=$(head -n 1 "$tmp/port")
	: >"$tmp/port"
	[ -n "$PORT" ] || { fail "peer $* did not start"; exit 1; }
}

for prog in wget python3; do
	if ! command -v "$prog" >/dev/null 2>&1; then
		echo "SKIPPED: $prog not installed"
		exit 0
	fi
done
# The interpreter itself, not a version manager's shell shim.
PY=$(python3 -c 'import sys; print(sys.executable)')

cat >"$tmp/late.yaml" <<'YAML'
version: 1
defaults:
  attempts: 6
  retry_budget: {ratio: 1, min_per_second: 1000, window: 10s, scope: process}
  backoff: {base: 100ms, cap: 5s, multiplier: 2, jitter: equal}
YAML
cat >"$tmp/hole.yaml" <<'YAML'
version: 1
defaults:
  connect_timeout: 500ms
  attempts: 2
  connect_budget: 10s
  retry_budget: {ratio: 1, min_per_second: 1000, window: 10s, scope: process}
  backoff: {base: 100ms, cap: 5s, multiplier: 2, jitter: none}
YAML

# run_wget URL [preload]: wget's body on stdout, its status returned.
run_wget() {
	if [ "${2:-}" = preload ]; then
		LD_PRELOAD=$RS_LIB RESOLUTE_POLICY=$POLICY timeout 20 \
			wget --tries=1 -q -O - "$1"
	else
		timeout "${LIMIT:-20}" wget --tries=1 -q -O - "$1"
	fi
}

# run PROG URL [preload]: dispatches to run_wget or run_python.
run() {
	case $1 in
	wget) shift; run_wget "$@" ;;
	python) shift; run_python "$@" ;;
	*) return 2 ;;
	esac
}

# run_python URL [preload]: the same with urllib.  It writes "start
# EPOCH_MS" into $tmp/py.err once the interpreter is up: the blackhole's
# window counts from there (python3's start-up under a sanitizer on a
# loaded machine takes seconds).
run_python() {
	code='import sys, time, urllib.request
print("start %d" % (time.time() * 1000), file=sys.stderr, flush=True)
sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())'
	if [ "${2:-}" = preload ]; then
		LD_PRELOAD=$RS_LIB RESOLUTE_POLICY=$POLICY timeout 20 \
			"$PY" -c "$code" "$1" 2>"$tmp/py.err"
	else
		timeout "${LIMIT:-20}" "$PY" -c "$code" "$1" 2>"$tmp/py.err"
	fi
}

# A late listener: refused without the library, reached with it.
late_listener() {
	prog=$1
	POLICY=$tmp/late.yaml
	start_peer late -d 5000
	if body=$(run "$prog" "http://127.0.0.1:$PORT/"); then
		fail "$prog without the library reached a server not listening"
	else
		ok "$prog without the library: refused at once"
	fi
	start_peer late -d 700
	t0=$(now_ms)
	body=$(run "$prog" "http://127.0.0.1:$PORT/" preload)
	rc=$?
	ms=$(($(now_ms) - t0))
	if [ $rc -eq 0 ] && [ "$body" = xxxxx ]; then
		ok "$prog under resolute reached the late listener (${ms} ms)"
	else
		fail "$prog under resolute: status $rc, body '$body' (${ms} ms)"
	fi
}

# A blackholed address: failure inside the window, not a hang.
blackhole() {
	prog=$1
	POLICY=$tmp/hole.yaml
	t0=$(now_ms)
	: >"$tmp/py.err"
	run "$prog" "http://$BLACKHOLE/" preload >/dev/null
	rc=$?
	t1=$(now_ms)
	started=$(sed -n 's/^start \([0-9][0-9]*\)$/\1/p' "$tmp/py.err")
	ms=$((t1 - ${started:-$t0}))
	hi=$((1100 + STARTUP + SLACK))
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $ms -ge 1100 ] &&
	    [ $ms -lt $hi ]; then
		ok "$prog against a blackhole failed after ${ms} ms (window 1100-$hi)"
	else
		fail "$prog against a blackhole: status $rc after ${ms} ms" \
		    "(window 1100-$hi)"
	fi
	LIMIT=2 run "$prog" "http://$BLACKHOLE/" >/dev/null
	rc=$?
	if [ $rc -eq 124 ]; then
		ok "$prog without the library still hangs after 2 s"
	else
		fail "$prog without the library: status $rc, expected a hang"
	fi
}

late_listener wget
late_listener python
if [ "${RS_NETNS:-}" = 1 ]; then
	blackhole wget
	blackhole python
fi
echo "$fails failed"
[ $fails -eq 0 ] || exit 1
if [ "${RS_NETNS:-}" != 1 ]; then
	echo "SKIPPED: blackhole cases need scripts/netns.sh (root and nft)"
fi
exit 0
