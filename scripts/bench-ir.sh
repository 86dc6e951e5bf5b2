#!/bin/sh
# SPDX-License-Identifier: MIT
# bench-ir.sh - user-space instructions per operation, with and without the
# library: callgrind's Ir count (exact and repeatable, unlike time on a
# shared machine) of a run of N operations subtracted from one of 2N, so
# that start-up (the policy parse, symbol resolution) cancels out.  Each
# process is counted apart: the benchmark's peer is a fork, under the
# library too.  The clock reads themselves do not show: valgrind replaces
# the vDSO with a system call, so add their cost (about 25 ns for
# CLOCK_MONOTONIC, 5 ns for CLOCK_MONOTONIC_COARSE) by hand.
#
# The redis rows run redis-benchmark (-c 8, GET and SET) against a private
# redis-server on 127.0.0.1 (bench/services.sh), when both are installed.
# redis-benchmark's own count moves by some hundreds of instructions a
# request from run to run (a throughput timer that runs with wall time,
# its latency histogram), so those rows also give the library's own
# instructions (the functions compiled from src/), which do not.
#
#   scripts/bench-ir.sh                 (the rows below; about a minute)
#   BENCH_LIB=other/libresolute.so scripts/bench-ir.sh
set -u
cd "$(dirname "$0")/.." || exit 2
B=${B:-build}
CC=${CC:-cc}
LIB=${BENCH_LIB:-$PWD/$B/libresolute.so}
die() { echo "bench-ir: $*" >&2; exit 2; }
command -v valgrind >/dev/null 2>&1 || die "valgrind missing"
[ -f "$LIB" ] || die "$LIB missing; run make first"
mkdir -p "$B/bench"
for p in pingpong fdio connects epollctl ionames; do
	[ -n "$(find "$B/bench/$p" -newer "bench/$p.c" 2>/dev/null)" ] &&
		continue
	$CC -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -o "$B/bench/$p" \
		"bench/$p.c" -lpthread || exit 2
done
tmp=$(mktemp -d /tmp/rs-bench-ir-XXXXXX)
SVC_DIR="$tmp/svc"
mkdir -p "$SVC_DIR"
# shellcheck source=bench/services.sh
. bench/services.sh
trap 'stop_services; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
printf 'version: 1\ndefaults:\n  read_timeout: 5s\n  write_timeout: 5s\n' \
	>"$tmp/rw5s.yaml"
cp policy/default.yaml "$tmp/default.yaml"
printf 'version: 1\ndefaults:\n  breaker: {failures: 5}\n' >"$tmp/breaker.yaml"
# rw5s's timeouts as `auto` bounded to 5 s (SPEC 13): the rows differ by
# auto alone (bench.sh says more).
printf 'version: 1\ndefaults:\n  read_timeout: auto\n  write_timeout: auto\n  auto_timeout:\n    min: 5s\n    max: 5s\n' \
	>"$tmp/rwauto.yaml"

# ir POLICY N PROG ARGS...: the Ir of each process of one run ("" for
# bare), smallest pid (the benchmark itself) first.
ir() {
	ir_pol=$1 ir_n=$2
	shift 2
	rm -f "$tmp"/cg.*
	if [ -n "$ir_pol" ]; then
		env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$tmp/$ir_pol.yaml" \
		    RESOLUTE_LOG=error valgrind --tool=callgrind \
		    --callgrind-out-file="$tmp/cg.%p" "$@" "$ir_n" \
		    >/dev/null 2>&1
	else
		valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.%p" \
		    "$@" "$ir_n" >/dev/null 2>&1
	fi
	for f in $(cd "$tmp" && ls cg.* | sort -t. -k2 -n); do
		awk '/^summary:/ { printf "%s ", $2 }' "$tmp/$f"
	done
	echo
}

# own FILE: the Ir of FILE's functions compiled from src/core/ and
# src/preload/ (the library, wherever it was built).
own() {
	callgrind_annotate --auto=no --show-percs=no --inclusive=no \
	    --threshold=100 "$1" 2>/dev/null | awk '
		/^ *[0-9,]+ / && $2 ~ /(^|\/)src\/(core|preload)\// {
			v = $1; gsub(",", "", v); s += v }
		END { printf "%.0f\n", s }'
}

# per_op POLICY N OPS PROG ARGS...: Ir per operation of each process.
per_op() {
	po_pol=$1 po_n=$2 po_ops=$3
	shift 3
	a=$(ir "$po_pol" "$po_n" "$@")
	b=$(ir "$po_pol" $((2 * po_n)) "$@")
	echo "$a|$b" | awk -v d="$((po_n * po_ops))" -F'|' '{
		n = split($1, x, " "); split($2, y, " ")
		for (i = 1; i <= n; i++) printf " %.1f", (y[i] - x[i]) / d
		print "" }'
}

# row NAME POLICY N OPS PROG ARGS...: bare, with, and the difference.
row() {
	r_name=$1 r_pol=$2 r_n=$3 r_ops=$4
	shift 4
	off=$(per_op "" "$r_n" "$r_ops" "$@")
	on=$(per_op "$r_pol" "$r_n" "$r_ops" "$@")
	echo "$r_name|$off|$on" | awk -F'|' '{
		n = split($2, x, " "); split($3, y, " ")
		printf "%-18s", $1
		for (i = 1; i <= n; i++)
			printf "  %s: %6.1f -> %6.1f (%+.1f)",
			    i == 1 ? "main" : "peer", x[i], y[i], y[i] - x[i]
		print "" }'
}

# redis_row NAME POLICY N: Ir per request of redis-benchmark (2N requests
# a run: N GETs, N SETs), bare and with, and the library's own.
redis_row() {
	rr_name=$1 rr_pol=$2 rr_n=$3
	set -- redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -c 8 -q \
	    -t get,set -n
	off=$(per_op "" "$rr_n" 2 "$@")
	rr_a=$(ir "$rr_pol" "$rr_n" "$@" >/dev/null; own "$(ls "$tmp"/cg.*)")
	rr_on1=$(awk '/^summary:/ { print $2 }' "$tmp"/cg.*)
	rr_b=$(ir "$rr_pol" $((2 * rr_n)) "$@" >/dev/null
	    own "$(ls "$tmp"/cg.*)")
	rr_on2=$(awk '/^summary:/ { print $2 }' "$tmp"/cg.*)
	echo "$rr_name $off $rr_on1 $rr_on2 $rr_a $rr_b" | awk \
	    -v d="$((2 * rr_n))" '{
		on = ($4 - $3) / d
		printf "%-18s  main: %6.1f -> %6.1f (%+.1f; the library'"'"'s own: %.1f)\n",
		    $1, $2, on, on - $2, ($6 - $5) / d }'
}

echo "user-space instructions (callgrind Ir) per operation (a call; a round"
echo "trip for poll_rt_*, a request for redis_*), bare -> with the library"
row pingpong_rw5s rw5s 2000 2 "$B/bench/pingpong"
row pingpong_rwauto rwauto 2000 2 "$B/bench/pingpong"
row pingpong_default default 2000 2 "$B/bench/pingpong"
# send, poll for the echo, read: libpq's pattern, per round trip.
row poll_rt_rw5s rw5s 2000 1 "$B/bench/pingpong" poll
row poll_rt_rwauto rwauto 2000 1 "$B/bench/pingpong" poll
row poll_rt_default default 2000 1 "$B/bench/pingpong" poll
row pipe_unmanaged rw5s 20000 2 "$B/bench/fdio" pipe
# sendmmsg + recvmmsg, half on a managed socket with nothing to time.
row mmsg_default default 2000 4 "$B/bench/fdio" mmsg
# The other names' pairs (sendto+recvfrom with no address, writev+readv,
# sendmsg+recvmsg): per call blocking, per round trip with poll.
for n in recvfrom readv recvmsg; do
	row "${n}_rw5s" rw5s 2000 2 "$B/bench/ionames" "$n"
	row "${n}_poll_rt_rw5s" rw5s 2000 1 "$B/bench/ionames" "$n" poll
done
# epoll_ctl ADD, MOD, DEL of a connected socket: per call.
row epoll_ctl_rw5s rw5s 2000 3 "$B/bench/epollctl"
row epoll_ctl_default default 2000 3 "$B/bench/epollctl"
# connect + close; its in-process acceptor's accept and close included.
row connect_close default 1000 1 "$B/bench/connects"
# The same with a circuit breaker on (closed: the address has no entry).
row connect_close_breaker breaker 1000 1 "$B/bench/connects"
if ! command -v redis-benchmark >/dev/null 2>&1 ||
    ! command -v redis-server >/dev/null 2>&1; then
	echo "SKIPPED redis rows: redis-server or redis-benchmark missing"
elif ! start_redis || [ -z "$REDIS_PORT" ]; then
	echo "SKIPPED redis rows: redis-server did not start"
else
	redis_row redis_default default 10000
	redis_row redis_rw5s rw5s 10000
fi
