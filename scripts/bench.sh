#!/bin/sh
# bench.sh - the library's cost, measured: every benchmark runs without and
# with LD_PRELOAD in the same invocation, alternating, REPS times each; the
# table shows the medians and the cost ratio (time with / time without).
# Figures only: nothing here asserts a timing (machines differ).
#
#   scripts/bench.sh            (make bench)
#   REPS=7 B=build scripts/bench.sh
set -eu
cd "$(dirname "$0")/.." || exit 2
B=${B:-build}
CC=${CC:-cc}
REPS=${REPS:-5}
LIB="$PWD/$B/libresolute.so"
[ -f "$LIB" ] || { echo "bench: $LIB missing; run make first" >&2; exit 2; }
# `make bench` builds the programs; this is for running the script alone.
mkdir -p "$B/bench"
for p in pingpong fdio bulk connects; do
	[ -n "$(find "$B/bench/$p" -newer "bench/$p.c" 2>/dev/null)" ] && continue
	$CC -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -o "$B/bench/$p" \
		"bench/$p.c" -lpthread
done
policy=$(mktemp /tmp/rs-bench-XXXXXX)
trap 'rm -f "$policy"' EXIT
# Timeouts long enough never to fire, so the timeout path is what is timed.
printf 'version: 1\ndefaults:\n  read_timeout: 30s\n  write_timeout: 30s\n' \
	>"$policy"

# median FILE: the median of the numbers in FILE, one per line.
median() {
	sort -g "$1" | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2];
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# run NAME REPS CMD...: prints "NAME without with" (median figures).
run() {
	name=$1 reps=$2
	shift 2
	off=$(mktemp) on=$(mktemp)
	i=0
	while [ "$i" -lt "$reps" ]; do
		"$@" | awk '{ print $2 }' >>"$off"
		env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$policy" \
			RESOLUTE_LOG=error "$@" | awk '{ print $2 }' >>"$on"
		i=$((i + 1))
	done
	echo "$name $(median "$off") $(median "$on")"
	rm -f "$off" "$on"
}

# Ping-pong and the descriptor loops run pinned to one CPU: on a shared
# machine, migrations and the scheduler's choice of core otherwise swamp a
# difference of a few per cent.
pin=""
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -gt 1 ]; then
	pin="taskset -c $(($(nproc) - 1))"
fi
results=$(mktemp)
# shellcheck disable=SC2086 # $pin is a command prefix or nothing
{
	run "pingpong_1B_200k_rt(ns/rt)" "$REPS" $pin "$B/bench/pingpong" 200000
	run "pipe_1M_rw(ns/op)" "$REPS" $pin "$B/bench/fdio" pipe 1000000
	run "devzero_1M_rw(ns/op)" "$REPS" $pin "$B/bench/fdio" zero 1000000
} >>"$results"
run "bulk_1GiB(MB/s)" 3 "$B/bench/bulk" 1024 >>"$results"
run "connect+close_10k(us)" 3 "$B/bench/connects" 10000 >>"$results"

# Throughput is inverted so that every ratio reads "time with / without".
awk '
BEGIN {
	printf "%-28s %12s %12s %8s %s\n", "benchmark (median)", "without",
	    "with", "ratio", "target"
	t["pingpong_1B_200k_rt(ns/rt)"] = "< 1.03"
	t["pipe_1M_rw(ns/op)"] = "< 1.02"
	t["devzero_1M_rw(ns/op)"] = "< 1.02"
	t["bulk_1GiB(MB/s)"] = "< 1.01"
}
{
	ratio = ($1 ~ /MB\/s/) ? $2 / $3 : $3 / $2
	extra = ($1 ~ /connect/) ? sprintf("  (+%.2f us per connect)", $3 - $2) : ""
	printf "%-28s %12.2f %12.2f %8.3f %s%s\n", $1, $2, $3, ratio, t[$1], extra
}' "$results"
rm -f "$results"
