#!/bin/sh
# bench-sidecar.sh - resolute in-process versus an HAProxy sidecar doing
# the same connect timeout and retries, measured side by side in one run.
#
# COUNT requests over fresh connections (connect, request, response, close)
# to a local HTTP peer: directly, directly under libresolute.so, and through
# HAProxy (timeout connect 3s, retries 2, i.e. 3 attempts, as the default
# policy).  Prints median, p90 and p99 latency to 0.1 us, the ratio to
# direct, and what each adds to direct at the median.  Client, peer and
# HAProxy run pinned to one CPU (when taskset exists), so that the figures
# repeat; ROUNDS interleaved rounds are averaged.
set -u
cd "$(dirname "$0")/.." || exit 2
B=${B:-build}
COUNT=${COUNT:-3000}
ROUNDS=${ROUNDS:-3}
pin=""
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -gt 1 ]; then
	pin="taskset -c $(($(nproc) - 1))"
fi
RR="$B/bench/http_rr"
if ! command -v haproxy >/dev/null 2>&1; then
	echo "bench-sidecar: haproxy not installed (apt-get install haproxy); skipped"
	exit 0
fi
tmp=$(mktemp -d)
trap 'kill $peer $hap 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
# shellcheck disable=SC2086 # $pin is a command prefix or nothing
$pin "$B/itests/peer" http -b 64 -l 600000 >"$tmp/port" &
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
# shellcheck disable=SC2086
$pin haproxy -f "$tmp/haproxy.cfg" -db >"$tmp/haproxy.log" 2>&1 &
hap=$!
i=0
until "$RR" 127.0.0.5 "$hport" 1 >/dev/null 2>&1 || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
if [ $i -ge 50 ]; then
	echo "bench-sidecar: haproxy did not start:"; cat "$tmp/haproxy.log"; exit 1
fi

# run PRE HOST PORT: one measurement; PRE is "env ..." or "env".
# shellcheck disable=SC2086 # $pin is a command prefix or nothing
run() { $1 $pin "$RR" "$2" "$3" "$COUNT"; }
lib="env LD_PRELOAD=${BENCH_LIB:-$PWD/$B/libresolute.so} RESOLUTE_POLICY=$PWD/policy/default.yaml"
# Warm up, then one measurement each, interleaved to spread noise.
run env 127.0.0.1 "$port" >/dev/null
round=0
while [ $round -lt "$ROUNDS" ]; do
	round=$((round + 1))
	d=$(run env 127.0.0.1 "$port")
	r=$(run "$lib" 127.0.0.1 "$port")
	h=$(run env 127.0.0.5 "$hport")
	echo "$round $d | $r | $h"
done | awk -v n="$COUNT" -v pin="${pin:-unpinned}" '
	{ dp50 += $2; dp90 += $3; dp99 += $4;
	  rp50 += $7; rp90 += $8; rp99 += $9;
	  hp50 += $12; hp90 += $13; hp99 += $14; k++ }
	END {
	  printf "sidecar comparison: %d requests over fresh connections, x%d rounds, %s\n", n, k, pin
	  printf "  %-24s %9s %9s %9s %9s %11s\n", "", "p50 us", "p90 us", "p99 us", "p50 ratio", "adds (p50)"
	  printf "  %-24s %9.1f %9.1f %9.1f %9.3f %11s\n", "direct", dp50/k, dp90/k, dp99/k, 1, "-"
	  printf "  %-24s %9.1f %9.1f %9.1f %9.3f %8.1f us\n", "direct + libresolute.so", rp50/k, rp90/k, rp99/k, rp50/dp50, (rp50-dp50)/k
	  printf "  %-24s %9.1f %9.1f %9.1f %9.3f %8.1f us\n", "via HAProxy sidecar", hp50/k, hp90/k, hp99/k, hp50/dp50, (hp50-dp50)/k
	  if (rp50 > dp50) printf "  HAProxy adds %.1fx what resolute adds (target >= 40x)\n", (hp50-dp50)/(rp50-dp50)
	  else printf "  resolute adds nothing measurable at the median (HAProxy adds %.1f us)\n", (hp50-dp50)/k
	}'
