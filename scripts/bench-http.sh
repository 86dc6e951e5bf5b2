#!/bin/sh
# SPDX-License-Identifier: MIT
# bench-http.sh - what HTTP/1.x status retries (SPEC 9) cost per request
# when nothing is retried: the same requests bare, under the library with
# no `http:` rule, and under a rule with `http:` on, alternating, REPS
# times each (medians).  Figures only; nothing is asserted.
#
#   keep-alive: COUNT GETs over one connection (bench/http_ka.c)
#   fresh:      COUNT requests, each on a new connection (bench/http_rr.c
#               against the test peer's HTTP mode)
set -eu
cd "$(dirname "$0")/.." || exit 2
B=${B:-build}
REPS=${REPS:-5}
COUNT=${COUNT:-50000}
LIB="$PWD/$B/libresolute.so"
tmp=$(mktemp -d /tmp/rs-bench-http-XXXXXX)
peer=""
trap '[ -n "$peer" ] && kill $peer 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
printf 'version: 1\n' >"$tmp/off.yaml"
printf 'version: 1\nhosts:\n  - match: 127.0.0.1\n    http: {}\n' >"$tmp/on.yaml"

median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2];
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# series NAME FIELD CMD...: prints "NAME bare off on" (medians of FIELD).
series() {
	name=$1 field=$2
	shift 2
	: >"$tmp/bare"; : >"$tmp/off"; : >"$tmp/on"
	i=0
	while [ "$i" -lt "$REPS" ]; do
		"$@" | awk -v f="$field" '{ print $f }' >>"$tmp/bare"
		for p in off on; do
			env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$tmp/$p.yaml" \
				RESOLUTE_LOG=error "$@" |
				awk -v f="$field" '{ print $f }' >>"$tmp/$p"
		done
		i=$((i + 1))
	done
	echo "$name $(median <"$tmp/bare") $(median <"$tmp/off") $(median <"$tmp/on")"
}

# The peer is started here, not in the pipeline's subshell, so that the
# trap can stop it.
"$B/itests/peer" http -b 64 -l 600000 >"$tmp/port" &
peer=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
{
	series "keep-alive GET (ns/request)" 2 "$B/bench/http_ka" "$COUNT"
	series "fresh connection (us p50)" 1 "$B/bench/http_rr" 127.0.0.1 \
		"$(cat "$tmp/port")" 3000
} | awk '
BEGIN { printf "%-28s %10s %10s %10s %12s\n", "http (median)", "bare",
	"lib", "lib+http", "http costs" }
{ n = split($0, f, " "); on = f[n]; off = f[n - 1]; bare = f[n - 2]
  name = $0; sub(/ [^ ]+ [^ ]+ [^ ]+$/, "", name)
  printf "%-28s %10s %10s %10s %+11.2f%%\n", name, bare, off, on,
      (on - off) * 100 / off }'
