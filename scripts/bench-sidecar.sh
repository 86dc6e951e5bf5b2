#!/bin/sh
# bench-sidecar.sh - resolute in-process versus an HAProxy sidecar doing
# the same connect timeout and retries, measured side by side in one run.
#
# COUNT requests over fresh connections (connect, request, response, close)
# to a local HTTP peer: directly, directly under libresolute.so, and through
# HAProxy (timeout connect 3s, retries 2, i.e. 3 attempts, as the default
# policy).  Prints median, p90 and p99 latency and the ratio to direct.
set -u
cd "$(dirname "$0")/.." || exit 2
B=${B:-build}
COUNT=${COUNT:-3000}
RR="$B/bench/http_rr"
if ! command -v haproxy >/dev/null 2>&1; then
	echo "bench-sidecar: haproxy not installed (apt-get install haproxy); skipped"
	exit 0
fi
tmp=$(mktemp -d)
trap 'kill $peer $hap 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
"$B/itests/peer" http -b 64 -l 600000 >"$tmp/port" &
peer=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
port=$(cat "$tmp/port")
# The sidecar listens on another loopback address with the same port
# number, which is free there by construction.
hport=$port
cat >"$tmp/haproxy.cfg" <<CFG
global
	maxconn 1000
defaults
	mode tcp
	timeout connect 3s
	timeout client 30s
	timeout server 30s
	retries 2
	option redispatch
listen sidecar
	bind 127.0.0.5:$hport
	server peer 127.0.0.1:$port
CFG
haproxy -f "$tmp/haproxy.cfg" -db >"$tmp/haproxy.log" 2>&1 &
hap=$!
i=0
until "$RR" 127.0.0.5 "$hport" 1 >/dev/null 2>&1 || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
if [ $i -ge 50 ]; then
	echo "bench-sidecar: haproxy did not start:"; cat "$tmp/haproxy.log"; exit 1
fi

run() { "$RR" "$1" "$2" "$COUNT"; }
# Warm up, then one measurement each, interleaved twice to spread noise.
run 127.0.0.1 "$port" >/dev/null
for round in 1 2; do
	d=$(run 127.0.0.1 "$port")
	r=$(LD_PRELOAD="$PWD/$B/libresolute.so" run 127.0.0.1 "$port")
	h=$(run 127.0.0.5 "$hport")
	echo "$round $d | $r | $h"
done | awk -v n="$COUNT" '
	{ dp50 += $2; dp90 += $3; dp99 += $4;
	  rp50 += $7; rp90 += $8; rp99 += $9;
	  hp50 += $12; hp90 += $13; hp99 += $14; k++ }
	END {
	  printf "sidecar comparison: %d requests over fresh connections, x%d rounds\n", n, k
	  printf "  %-28s %9s %9s %9s %8s\n", "", "p50 us", "p90 us", "p99 us", "p50 ratio"
	  printf "  %-28s %9.0f %9.0f %9.0f %8.2f\n", "direct", dp50/k, dp90/k, dp99/k, 1
	  printf "  %-28s %9.0f %9.0f %9.0f %8.2f\n", "direct + libresolute.so", rp50/k, rp90/k, rp99/k, rp50/dp50
	  printf "  %-28s %9.0f %9.0f %9.0f %8.2f\n", "via HAProxy sidecar", hp50/k, hp90/k, hp99/k, hp50/dp50
	}'
