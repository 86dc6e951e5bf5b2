#!/bin/sh
# SPDX-License-Identifier: MIT
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
COUNT=${COUNT:-10000}
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

# The same three inside one process, interleaved request by request
# (http_rr mixed: raw system calls for direct and sidecar, libc's, the
# library's, for the middle one), ROUNDS runs averaged; then the same
# bare, where the middle one is direct again: the method's own error.
# Separate runs differ by a few us at the median, as much as the library
# adds; inside one process they share the load of every moment.
# mixed PRE: "direct|library|sidecar p50 p90 p99 mean" averaged.
# Each round's own ratio (what the sidecar adds over what the library
# adds, at the median) comes out as "round RATIO", so that the spread of
# the rounds shows next to their average.  "paired KIND MEDIAN": the
# median of each request's difference from the direct request beside it
# (http_rr mixed), averaged over the rounds, with "pround RATIO" per
# round: the same costs with the distributions' own spread cancelled.
mixed() {
	round=0
	while [ $round -lt "$ROUNDS" ]; do
		round=$((round + 1))
		# shellcheck disable=SC2086 # $1 and $pin are command prefixes
		$1 $pin "$RR" mixed 127.0.0.1 "$port" 127.0.0.5 "$hport" "$COUNT"
	done | awk '$1 == "paired" { pd[$2] += $3; pk[$2]++; pr[$2] = $3
		if ($2 == "sidecar")
			printf "pround %s\n", (pr["library"] > 0 ?
			    sprintf("%.1f", $3 / pr["library"]) : "inf")
		next }
	    { p50[$1] += $2; p90[$1] += $3; p99[$1] += $4; k[$1]++
		  r50[$1] = $2 }
	    $1 == "sidecar" && k["direct"] == k["library"] &&
	    k["library"] == k["sidecar"] {
		lib = r50["library"] - r50["direct"]
		printf "round %s\n", (lib > 0 ?
		    sprintf("%.1f", (r50["sidecar"] - r50["direct"]) / lib) : "inf")
	    }
	    END { for (n in k) printf "%s %.2f %.2f %.2f\n", n, p50[n] / k[n],
		p90[n] / k[n], p99[n] / k[n]
		for (n in pk) printf "paired %s %.2f\n", n, pd[n] / pk[n] }'
}
{ mixed "$lib" | sed 's/^/on /'; mixed env | sed 's/^/off /'; } | awk \
    -v n="$COUNT" -v r="$ROUNDS" '
	$1 == "on" && $2 == "round" { rounds = rounds (rounds == "" ? "" : ", ") $3; next }
	$1 == "on" && $2 == "pround" { prounds = prounds (prounds == "" ? "" : ", ") $3; next }
	$2 == "round" || $2 == "pround" { next }
	$2 == "paired" { pp[$1 " " $3] = $4; next }
	{ p50[$1 " " $2] = $3; p90[$1 " " $2] = $4; p99[$1 " " $2] = $5 }
	function line(label, key, base) {
	  printf "  %-24s %9.1f %9.1f %9.1f %11s\n", label, p50[key],
	    p90[key], p99[key], base == "" ? "-" :
	    sprintf("%+.1f us", p50[key] - p50[base])
	}
	END {
	  printf "in one process, interleaved request by request: %d requests of each kind, x%d\n", n, r
	  printf "  %-24s %9s %9s %9s %11s\n", "", "p50 us", "p90 us", "p99 us", "adds (p50)"
	  line("direct", "on direct", "")
	  line("direct + libresolute.so", "on library", "on direct")
	  line("via HAProxy sidecar", "on sidecar", "on direct")
	  line("bare: direct again", "off library", "off direct")
	  lib = p50["on library"] - p50["on direct"]
	  hap = p50["on sidecar"] - p50["on direct"]
	  err = p50["off library"] - p50["off direct"]
	  if (lib > 0) printf "  HAProxy adds %.1fx what resolute adds (target >= 40x); the method error bare is %+.1f us\n", hap / lib, err
	  else printf "  resolute adds nothing measurable at the median (HAProxy adds %.1f us; method error %+.1f us)\n", hap, err
	  printf "  each round alone (HAProxy adds / resolute adds): %s\n", rounds
	  plib = pp["on library"]; phap = pp["on sidecar"]
	  printf "  paired (each request against the direct one beside it, median of the\n"
	  printf "  differences): resolute %+.2f us, HAProxy %+.1f us", plib, phap
	  if (plib > 0) printf ": %.1fx", phap / plib
	  printf "; bare %+.2f us\n", pp["off library"]
	  printf "  each round alone, paired: %s\n", prounds
	}'
