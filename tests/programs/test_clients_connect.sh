#!/bin/sh
# SPDX-License-Identifier: MIT
# test_clients_connect.sh - real clients' non-blocking connects under the
# library: curl (poll), OpenBSD nc (poll), python3 with a socket timeout
# (poll), python3 asyncio (epoll) and node (libuv, epoll).
#
# Each client connects to a server that refuses for 700 ms (peer late) and
# must succeed, the library retrying inside the client's own waits.  In the
# test namespace, each connects to 127.0.0.2 (SYNs dropped) and must fail
# within the policy's window (3 attempts of 300 ms, waits of 100 and 200 ms:
# 1.2 s) instead of hanging.  Every command is bounded by timeout 20.
# Environment: RS_LIB, RS_BUILD (set by scripts/run-tests.sh), RS_NETNS.
set -u
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/../.." || exit 2
RS_BUILD=${RS_BUILD:-$PWD/build}
RS_LIB=${RS_LIB:-$RS_BUILD/libresolute.so}
SLACK=$((150 + ${RS_SLACK_MS:-0}))
# client NAME HOST PORT: runs the named client once; 0 on a 200 response.
# The interpreted ones (python3, node) print "start EPOCH_MS" just before
# they connect: under a sanitizer on a loaded machine their start-up alone
# takes seconds, which is not what the windows below are about.
client() {
	case $1 in
	curl)
		curl -sS -o /dev/null -w '%{http_code}\n' \
		    "http://$2:$3/" | grep -q '^200$' ;;
	nc)
		printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 5 "$2" "$3" |
		    grep -q '200 OK' ;;
	python3)
		python3 - "$2" "$3" <<'EOF'
import socket, sys, time
print("start %d" % (time.time() * 1000), file=sys.stderr, flush=True)
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
s.sendall(b"GET / HTTP/1.0\r\n\r\n")
sys.exit(0 if b"200 OK" in s.recv(4096) else 1)
EOF
		;;
	asyncio)
		python3 - "$2" "$3" <<'EOF'
import asyncio, sys, time
async def main():
    print("start %d" % (time.time() * 1000), file=sys.stderr, flush=True)
    r, w = await asyncio.open_connection(sys.argv[1], int(sys.argv[2]))
    w.write(b"GET / HTTP/1.0\r\n\r\n")
    return b"200 OK" in await r.read(4096)
sys.exit(0 if asyncio.run(main()) else 1)
EOF
		;;
	node)
		node -e '
console.error("start " + Date.now());
require("http").get({host: process.argv[1], port: +process.argv[2]},
    (res) => process.exit(res.statusCode === 200 ? 0 : 1))
    .on("error", (e) => { console.error(e.code); process.exit(1); });
' "$2" "$3" ;;
	esac
}

if [ "${1:-}" = --client ]; then
	client "$2" "$3" "$4"
	exit
fi

tmp=$(mktemp -d /tmp/rs-clients-XXXXXX)
fails=0 passes=0 skipped=""
peer_pid=""

cleanup() {
	[ -n "$peer_pid" ] && kill "$peer_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

cat >"$tmp/retry.yaml" <<'EOF'
version: 1
defaults:
  connect_timeout: 1s
  attempts: 6
  backoff: {base: 100ms, jitter: none}
  retry_budget: {ratio: 1000, min_per_second: 100000}
EOF
cat >"$tmp/drop.yaml" <<'EOF'
version: 1
defaults:
  connect_timeout: 300ms
  attempts: 3
  backoff: {base: 100ms, jitter: none}
  retry_budget: {ratio: 1000, min_per_second: 100000}
EOF

# Starts "peer late -d 700"; sets $port.  Bounded: 500 checks of 20 ms.
# The peer refuses for 700 ms from its start: times of the refused-then-up
# case are measured from there (peer_t0), not from the client's start.
start_peer() {
	: >"$tmp/port"
	peer_t0=$(now_ms)
	"$RS_BUILD/itests/peer" late -d 700 -l 30000 >"$tmp/port" &
	peer_pid=$!
	i=0
	while [ ! -s "$tmp/port" ] && [ $i -lt 500 ]; do
		sleep 0.02
		i=$((i + 1))
	done
	port=$(cat "$tmp/port")
	[ -n "$port" ] || { echo "FAIL  the peer did not start"; exit 1; }
}

stop_peer() {
	kill "$peer_pid" 2>/dev/null
	wait "$peer_pid" 2>/dev/null
	peer_pid=""
}

# shellcheck source=tests/programs/sanitizer.sh
. tests/programs/sanitizer.sh

installed() {
	case $1 in
	asyncio) command -v python3 >/dev/null ;;
	curl) command -v curl >/dev/null && usable curl --version ;;
	*) command -v "$1" >/dev/null ;;
	esac
}

# run POLICY NAME HOST PORT: the client under the library, bounded by
# timeout 20 (this script re-runs itself in client mode), timed; sets $rc,
# $ms (from the client's "start" line, else from before it started), $t1
# (its end) and $cs (when it was ready to connect).
run() {
	t0=$(now_ms)
	LD_PRELOAD="$RS_LIB" RESOLUTE_POLICY="$1" RESOLUTE_LOG=error \
	    timeout 20 sh "$self" --client "$2" "$3" "$4" >"$tmp/out" 2>&1
	rc=$?
	t1=$(now_ms)
	cs=$(sed -n 's/^start \([0-9][0-9]*\)$/\1/p' "$tmp/out" | head -1)
	cs=${cs:-$t0}
	ms=$((t1 - cs))
}

pass() {
	passes=$((passes + 1))
	echo "ok    $*"
}

fail() {
	fails=$((fails + 1))
	echo "FAIL  $*"
	sed 's/^/    | /' "$tmp/out"
}

for c in curl nc python3 asyncio node; do
	if ! installed "$c"; then
		echo "skip  $c: not available here"
		skipped="$skipped $c"
		continue
	fi
	start_peer
	run "$tmp/retry.yaml" "$c" 127.0.0.1 "$port"
	ms=$((t1 - peer_t0))
	stop_peer
	# The first attempt after 700 ms succeeds, at most one backoff step
	# (800 ms) after the port opened or the client was ready to connect,
	# whichever came later; then the client exits.
	from=$((peer_t0 + 700))
	[ "$cs" -gt "$from" ] && from=$cs
	if [ "$rc" = 0 ] && [ "$ms" -ge 700 ] &&
	    [ $((t1 - from)) -lt $((1000 + SLACK)) ]; then
		pass "$c: refused for 700 ms, connected $ms ms after the server started"
	else
		fail "$c: refused for 700 ms: exit $rc after $ms ms" \
		    "($((t1 - from)) ms after the port opened or the client was ready)"
	fi
	if [ "${RS_NETNS:-}" != 1 ]; then
		continue
	fi
	run "$tmp/drop.yaml" "$c" 127.0.0.2 80
	if [ "$rc" != 0 ] && [ "$ms" -ge 1200 ] && [ "$ms" -lt $((1200 + 1000 + SLACK)) ]; then
		pass "$c: SYNs dropped, failed after $ms ms (exit $rc)"
	else
		fail "$c: SYNs dropped: exit $rc after $ms ms"
	fi
done

echo "$passes passed, $fails failed${skipped:+, not available:$skipped}"
if [ "${RS_NETNS:-}" != 1 ] && [ $fails = 0 ]; then
	echo "SKIPPED: dropped-SYN cases need the network namespace (root)"
fi
[ $fails = 0 ]
