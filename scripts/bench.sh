#!/bin/sh
# SPDX-License-Identifier: MIT
# bench.sh - the library's cost, measured: every benchmark runs without and
# with LD_PRELOAD in the same invocation, alternating, REPS times each,
# pinned to one CPU (so runs repeat to about 1% and the library's CPU cost
# counts in full); the table shows the medians, the ratio with/without and
# the system calls per operation of each side, counted with strace -c as
# the difference between a short and a long run (start-up cancels out; the
# counts do not depend on machine noise).  Figures only: nothing here
# asserts a timing (machines differ).
#
#   scripts/bench.sh            (make bench)
#   REPS=7 B=build scripts/bench.sh
#   BENCH_ONLY="pingpong epoll" scripts/bench.sh    (rows whose name matches)
#
# After the table, two sections measured inside one process (about 2 min
# together): connect_close_pairs (bench/connects.c pairs and floor) and
# pingpong_pairs (bench/pingpong.c vslibc and floor; blocking, poll and
# epoll), each with the same run bare as the method's own error;
# BENCH_ONLY selects them by those names too.
set -u
cd "$(dirname "$0")/.." || exit 2
B=${B:-build}
CC=${CC:-cc}
REPS=${REPS:-5}
# PAIRS: pairs of short runs for the rows of the noisiest ratios (redis,
# pgbench), whose spread is reported with them.
PAIRS=${PAIRS:-15}
# BENCH_LIB: another build of the library to measure (a baseline).
LIB=${BENCH_LIB:-$PWD/$B/libresolute.so}
[ -f "$LIB" ] || { echo "bench: $LIB missing; run make first" >&2; exit 2; }
# `make bench` builds the programs; this is for running the script alone.
mkdir -p "$B/bench"
for c in bench/*.c; do
	p=$(basename "$c" .c)
	[ -n "$(find "$B/bench/$p" -newer "$c" 2>/dev/null)" ] && continue
	libs=-lpthread
	case $p in tls_*) libs="$libs -lssl -lcrypto" ;; esac
	# shellcheck disable=SC2086
	$CC -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -o "$B/bench/$p" "$c" \
		$libs || exit 2
done
tmp=$(mktemp -d /tmp/rs-bench-XXXXXX)
# shellcheck source=bench/services.sh
. bench/services.sh
trap 'stop_services; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
# Timeouts long enough never to fire, so the timeout path is what is timed.
printf 'version: 1\ndefaults:\n  read_timeout: 5s\n  write_timeout: 5s\n' \
	>"$tmp/rw5s.yaml"
printf 'version: 1\ndefaults:\n  read_timeout: 30s\n' >"$tmp/r30s.yaml"
# read_timeout and write_timeout auto (SPEC 13), bounded to rw5s's 5 s
# both ways: the same timeouts, so the rows differ by `auto` alone (the
# cache of its value, and the check that the kernel's timer follows it);
# the learning itself runs under rw5s too.
printf 'version: 1\ndefaults:\n  read_timeout: auto\n  write_timeout: auto\n  auto_timeout:\n    min: 5s\n    max: 5s\n' \
	>"$tmp/rwauto.yaml"
cp policy/default.yaml "$tmp/default.yaml"
# The built-in settings with a circuit breaker (SPEC 12): a healthy
# connect asks it and finds no breaker for its address.
printf 'version: 1\ndefaults:\n  breaker: {failures: 5}\n' >"$tmp/breaker.yaml"
# TLS: the loopback peer unmanaged (passthrough), and a bench certificate.
printf 'version: 1\nhosts:\n  - match: 127.0.0.1\n    passthrough: true\n' \
	>"$tmp/unmanaged.yaml"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/tls.key" \
	-out "$tmp/tls.pem" -days 1 -subj /CN=localhost >/dev/null 2>&1

pin=""
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -gt 1 ]; then
	pin="taskset -c $(($(nproc) - 1))"
fi
has_strace=""
command -v strace >/dev/null 2>&1 && has_strace=1
has_perf=""
perf stat --no-inherit -x, -e raw_syscalls:sys_enter -o /dev/null true \
	>/dev/null 2>&1 && has_perf=1

# median FILE: the median of the numbers in FILE, one per line.
median() {
	sort -g "$1" | awk '{ v[NR] = $1 } END {
		if (NR == 0) print "nan";
		else if (NR % 2) print v[(NR + 1) / 2];
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Each b_* benchmark takes its size and runs under $PRE (an `env` setting
# LD_PRELOAD and the policy, or nothing) and $PIN; it prints "NAME VALUE".
b_prog() { bp=$1; shift; $PRE $PIN "$B/bench/$bp" "$@"; }
b_rr() { b_prog rr_delay "$1" 2000; }
b_pingpong() { b_prog pingpong "$1"; }
b_pipe() { b_prog fdio pipe "$1"; }
b_epoll() { b_prog epoll_idle "$1" 10000; }
b_connect() { b_prog connects "$1"; }
b_bulk() { b_prog bulk "$1"; }
b_tls() { b_prog tls_pingpong "$tmp/tls.pem" "$tmp/tls.key" "$1"; }
# Requests per second over GET and SET together (time-weighted).
b_redis() {
	$PRE $PIN redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -c 8 -n "$1" \
		-t get,set --csv 2>/dev/null | awk -F'"' -v n="$1" '
		$2 == "SET" || $2 == "GET" { t += n / $4; k++ }
		END { if (k == 2) print "redis", 2 * n / t }'
}
b_pgbench() {
	$PRE $PIN pgbench -n -h 127.0.0.1 -p "$PG_PORT" -U postgres -c 8 -j 1 \
		"$@" postgres 2>/dev/null | awk -F'= ' '
		/^tps/ { split($2, a, " "); print "pgbench", a[1] }'
}
b_pg_time() { b_pgbench -T "$1"; }
b_pg_count() { b_pgbench -t "$1"; }

# with POLICY: sets PRE so that what follows runs under the library.
with() { PRE="env LD_PRELOAD=$LIB RESOLUTE_POLICY=$tmp/$1.yaml RESOLUTE_LOG=error"; }

# busy_jiffies: "busy total" jiffies of all CPUs so far (/proc/stat).
busy_jiffies() {
	awk '$1 == "cpu" { t = 0; for (k = 2; k <= NF; k++) t += $k
		print t - $5 - $6, t; exit }' /proc/stat 2>/dev/null
}

# one_run FUNC SIZE OUT: one run, its figure appended to OUT; a run that
# prints nothing (it failed) leaves "fail", so that every run is counted.
one_run() {
	v=$($1 "$2" | awk '{ print $2 }')
	echo "${v:-fail}" >>"$3"
}

# time_row NAME POLICY REPS FUNC SIZE: REPS pairs of runs without and
# with the library, back to back, the order swapped every pair (ABBA...)
# so that a drift in machine load falls on both sides alike.  Each pair
# gives a ratio with/without; the row reports the medians of both sides,
# the median of the pair ratios and their interquartile range, and how
# busy the machine was meanwhile (load average; the share of both CPUs
# in use, this benchmark's one pinned CPU included).
time_row() {
	name=$1 pol=$2 reps=$3 fn=$4 size=$5
	: >"$tmp/off"
	: >"$tmp/on"
	l0=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null)
	j0=$(busy_jiffies)
	i=0
	while [ "$i" -lt "$reps" ]; do
		PRE="" PIN=$pin
		if [ $((i % 2)) = 0 ]; then
			one_run "$fn" "$size" "$tmp/off"
			with "$pol"
			one_run "$fn" "$size" "$tmp/on"
		else
			with "$pol"
			one_run "$fn" "$size" "$tmp/on"
			PRE=""
			one_run "$fn" "$size" "$tmp/off"
		fi
		i=$((i + 1))
	done
	l1=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null)
	j1=$(busy_jiffies)
	paste -d' ' "$tmp/off" "$tmp/on" | awk -v n="$name" -v l0="${l0:-?}" \
	    -v l1="${l1:-?}" -v j0="${j0:-0 0}" -v j1="${j1:-0 0}" -v ncpu="$(nproc)" '
	function q(p,   x, k) {	# quantile p of r[1..m], interpolated
		if (m == 0) return "nan"
		x = 1 + (m - 1) * p; k = int(x)
		return k >= m ? r[m] : r[k] + (x - k) * (r[k + 1] - r[k])
	}
	function med(a, c,   t, k, l, h) {	# median of a[1..c]
		if (c == 0) return "nan"
		for (k = 2; k <= c; k++) for (l = k; l > 1 && a[l - 1] > a[l]; l--) {
			h = a[l]; a[l] = a[l - 1]; a[l - 1] = h }
		return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
	}
	{
		if ($1 != "fail") off[++no] = $1
		if ($2 != "fail") on[++nn] = $2
		if ($1 == "fail" || $2 == "fail" || $1 == 0) { bad++; next }
		r[++m] = $2 / $1
	}
	END {
		for (k = 2; k <= m; k++) for (l = k; l > 1 && r[l - 1] > r[l]; l--) {
			h = r[l]; r[l] = r[l - 1]; r[l - 1] = h }
		split(j0, a, " "); split(j1, b, " ")
		busy = b[2] > a[2] ? 100 * (b[1] - a[1]) / (b[2] - a[2]) : -1
		printf "%s %s %s %s %s %s %d %d %s %s %.0f %d\n", n, med(off, no),
		    med(on, nn), q(0.5), q(0.25), q(0.75), m, bad + 0, l0, l1,
		    busy, ncpu
	}' >>"$tmp/times"
}

# strace_calls OUT FUNC SIZE: runs FUNC under strace -c (main thread only:
# peers forked or started by the benchmark are not counted); OUT gets
# "syscall calls" lines.
strace_calls() {
	sc_pre=$PRE
	PRE="strace -c -o $tmp/strace $sc_pre" PIN=""
	$2 "$3" >/dev/null
	awk '$1 ~ /^[0-9.]+$/ && $NF != "total" { print $NF, $4 }' \
		"$tmp/strace" >"$1"
	PRE=$sc_pre
}

# perf_calls OUT FUNC SIZE: the same total from perf's raw_syscalls
# tracepoint, which barely slows the program (strace does, so that a read
# may find data that a real run would have waited for); pinned like the
# timed runs, main thread only (--no-inherit).
perf_calls() {
	pc_pre=$PRE
	PRE="perf stat --no-inherit -x, -e raw_syscalls:sys_enter -o $tmp/perf $pc_pre"
	PIN=$pin
	$2 "$3" >/dev/null
	awk -F, '/raw_syscalls:sys_enter/ { print "all", $1 }' "$tmp/perf" >"$1"
	PRE=$pc_pre
}

# per_op OUT COUNTER FUNC N1 N2 OPS: system calls per operation, by name,
# from the difference between a run of size N2 and one of size N1 (OPS
# operations per unit of size); OUT gets "syscall per-op" lines and a
# "total" line.
per_op() {
	$2 "$tmp/c1" "$3" "$4"
	$2 "$tmp/c2" "$3" "$5"
	awk -v d="$(( ($5 - $4) * $6 ))" '
		FNR == NR { a[$1] = $2; next } { b[$1] = $2 }
		END { for (k in b) { v = (b[k] - a[k]) / d; t += v
			if (v >= 0.05 && k != "all") printf "%s %.2f\n", k, v }
		      printf "total %.2f\n", t }' "$tmp/c1" "$tmp/c2" >"$1"
}

# calls_row NAME POLICY FUNC N1 N2 OPS: the counts of both sides: totals
# from perf when it can count (else strace), names from strace.
calls_row() {
	[ -n "$has_strace" ] || [ -n "$has_perf" ] || return 0
	cr_name=$1 cr_pol=$2
	shift 2
	for side in off on; do
		PRE=""
		[ $side = on ] && with "$cr_pol"
		if [ -n "$has_strace" ]; then
			per_op "$tmp/sc-$side" strace_calls "$@"
		else
			echo "total -" >"$tmp/sc-$side"
		fi
		if [ -n "$has_perf" ]; then
			per_op "$tmp/pc-$side" perf_calls "$@"
		else
			cp "$tmp/sc-$side" "$tmp/pc-$side"
		fi
	done
	total() { awk '$1 == "total" { print $2 }' "$1"; }
	echo "$cr_name $(total "$tmp/pc-off") $(total "$tmp/pc-on")" >>"$tmp/calls"
	detail() { sort -k2 -gr "$1" | awk '$1 != "total" {
		printf "%s%s %s", sep, $1, $2; sep = ", " }'; }
	printf '  %-24s without: %s\n  %-24s with:    %s\n' "$cr_name" \
		"$(detail "$tmp/sc-off")" "" "$(detail "$tmp/sc-on")" >>"$tmp/detail"
}

# selected NAME: true when BENCH_ONLY is unset or one of its words is
# part of NAME.
selected() {
	[ -z "${BENCH_ONLY:-}" ] && return 0
	for w in $BENCH_ONLY; do
		case $1 in *"$w"*) return 0 ;; esac
	done
	return 1
}

# row NAME POLICY REPS FUNC SIZE [N1 N2 OPS [COUNT_FUNC]]: figures, then
# counts (with COUNT_FUNC instead of FUNC when given: a fixed amount of
# work rather than a fixed time).
row() {
	selected "$1" || return 0
	time_row "$1" "$2" "$3" "$4" "$5"
	[ $# -ge 8 ] && calls_row "$1" "$2" "${9:-$4}" "$6" "$7" "$8"
	return 0
}

: >"$tmp/times"
: >"$tmp/calls"
: >"$tmp/detail"
row rr_2ms_rw5s rw5s 3 b_rr 500 40 120 1
row pingpong_rw5s rw5s "$REPS" b_pingpong 30000 1000 3000 1
row pingpong_rwauto rwauto "$REPS" b_pingpong 30000 1000 3000 1
row pingpong_default default "$REPS" b_pingpong 30000 1000 3000 1
row pipe_unmanaged rw5s "$REPS" b_pipe 1000000 10000 30000 1
row epoll_10k_idle_r30s r30s "$REPS" b_epoll 30000 1000 3000 1
row connect_close default "$REPS" b_connect 10000 1000 3000 1
row connect_close_breaker breaker "$REPS" b_connect 10000 1000 3000 1
row bulk_512MiB rw5s 3 b_bulk 512
if [ -s "$tmp/tls.pem" ]; then
	row tls_pingpong_unmanaged unmanaged "$REPS" b_tls 20000 1000 3000 1
	row tls_pingpong_default default "$REPS" b_tls 20000 1000 3000 1
else
	echo "SKIPPED tls rows: the openssl CLI missing" >>"$tmp/detail"
fi
if command -v redis-benchmark >/dev/null 2>&1 && start_redis "$pin" &&
    [ -n "$REDIS_PORT" ]; then
	row redis_default default "$PAIRS" b_redis 10000 5000 15000 2
	row redis_rw5s rw5s "$PAIRS" b_redis 10000 5000 15000 2
else
	echo "SKIPPED redis rows: redis-server or redis-benchmark missing or not starting" >>"$tmp/detail"
fi
if command -v pgbench >/dev/null 2>&1 && start_postgres "$pin" &&
    [ -n "$PG_PORT" ] && pgbench -i -q -s 1 -h 127.0.0.1 -p "$PG_PORT" \
    -U postgres postgres >/dev/null 2>&1; then
	row pgbench_c8_rw5s rw5s "$PAIRS" b_pg_time 1 100 300 8 b_pg_count
else
	echo "SKIPPED pgbench row: PostgreSQL missing or not starting" >>"$tmp/detail"
fi

# Time rows: ratio with/without (lower is better); throughput rows (MB/s,
# rps, tps): with/without too (higher is better), as the issue tables put it.
awk -v pin="${pin:-unpinned}" '
BEGIN {
	u["rr_2ms_rw5s"] = "ns/rt"; u["pingpong_rw5s"] = "ns/rt"
	u["pingpong_rwauto"] = "ns/rt"; t["pingpong_rwauto"] = "= rw5s"
	u["pingpong_default"] = "ns/rt"; u["pipe_unmanaged"] = "ns/w+r"
	u["epoll_10k_idle_r30s"] = "ns/rt"; u["connect_close"] = "us/conn"
	u["bulk_512MiB"] = "MB/s"; u["redis_default"] = "req/s"
	u["redis_rw5s"] = "req/s"; u["pgbench_c8_rw5s"] = "tps"
	u["tls_pingpong_unmanaged"] = "ns/rt"; u["tls_pingpong_default"] = "ns/rt"
	t["tls_pingpong_unmanaged"] = "<= 1.01"; t["tls_pingpong_default"] = "<= 1.01"
	t["rr_2ms_rw5s"] = "calls = bare"; t["pingpong_rw5s"] = "<= 1.01"
	t["pingpong_default"] = "+<= 20 ns/call"
	t["pipe_unmanaged"] = "+<= 20 ns/call"
	t["epoll_10k_idle_r30s"] = "<= 1.10"
	t["connect_close"] = "calls <= bare+3, +<= 1 us"
	t["redis_default"] = ">= 0.99"; t["redis_rw5s"] = ">= 0.98"
	t["pgbench_c8_rw5s"] = ">= 0.97"
	printf "resolute benchmarks (%s; medians; ratio: median of the with/without ratios of\n", pin
	printf "pairs of runs, IQR: their interquartile range; calls: system calls per operation)\n"
	printf "%-21s %-7s %11s %11s %6s %11s %5s %7s %6s  %s\n", "benchmark", "unit",
	    "without", "with", "ratio", "IQR", "pairs", "calls", "calls", "target"
	printf "%-21s %-7s %11s %11s %6s %11s %5s %7s %6s\n", "", "", "", "", "", "", "",
	    "without", "with"
}
FNR == NR { c0[$1] = $2; c1[$1] = $3; next }
{
	x = ""
	if ($1 ~ /pingpong_default|pipe/) x = sprintf(" (%+.1f ns/call)", ($3 - $2) / 2)
	if ($1 ~ /connect/) x = sprintf(" (%+.2f us)", $3 - $2)
	if ($8 > 0) x = x sprintf(" (%d pairs failed)", $8)
	printf "%-21s %-7s %11.1f %11.1f %6.3f %5.3f-%5.3f %5d %7s %6s  %s%s\n", $1,
	    u[$1], $2, $3, $4, $5, $6, $7, ($1 in c0) ? c0[$1] : "-",
	    ($1 in c1) ? c1[$1] : "-", t[$1], x
	load[++nl] = sprintf("  %-24s load average %s -> %s; CPUs busy %s%% of %d",
	    $1, $9, $10, $11 < 0 ? "?" : $11, $12)
}
END {
	if (!nl) exit
	print "machine load during each row (this benchmark keeps one CPU busy, so"
	print "an idle machine shows about " int(100 / (nl ? $12 : 1)) "%; more is other work):"
	for (k = 1; k <= nl; k++) print load[k]
}' "$tmp/calls" "$tmp/times"
# in_process PROGRAM ARGS...: one run of a bench program's in-process
# mode, pinned, under $PRE; its lines without their leading names.
in_process() {
	ip_prog=$1
	shift
	# shellcheck disable=SC2086 # $PRE and $pin are command prefixes
	$PRE $pin "$B/bench/$ip_prog" "$@" 2>&1 | cut -d' ' -f2-
}
# The connect's added time inside one process (bench/connects.c "pairs":
# blocks through the library alternate with blocks of raw system calls),
# far less noisy than separate runs (1,000 pairs: the median moves by
# ~0.1 us from run to run, where 300 pairs' moved by ~0.5); bare, the
# same shows the method's own error; "coldpairs" the same with the CPU's
# caches emptied before each connect.  "floor" is the kernel's price of the
# calls the library adds (raw blocks with them against raw blocks
# without): the default policy's two setsockopt, and the fstat that a
# policy with read or write timeouts adds, so that the rest of the added
# time is the library's user space.
if selected connect_close_pairs; then
	echo "connect + close, added time in one process (library vs raw system calls, ABBA blocks of 100; target +<= 1 us):"
	with default
	printf '  %-40s %s\n' "with the library:" "$(in_process connects 200000 pairs)"
	PRE=""
	printf '  %-40s %s\n' "bare (method error):" "$(in_process connects 200000 pairs)"
	with breaker
	printf '  %-40s %s\n' "with the library, breaker on:" "$(in_process connects 200000 pairs)"
	with default
	printf '  %-40s %s\n' "with the library, cold caches:" "$(in_process connects 20000 coldpairs)"
	PRE=""
	printf '  %-40s %s\n' "bare, cold caches (method error):" "$(in_process connects 20000 coldpairs)"
	in_process connects 200000 floor | {
		read -r l1 && printf '  %-40s %s\n' "floor, raw + 2 setsockopt (default):" "$l1"
		read -r l2 && printf '  %-40s %s\n' "floor, + fstat (under timeouts):" "$l2"
	}
fi
# A ping-pong's added time inside one process (bench/pingpong.c
# "vslibc": a connection used through libc's calls, and so the library's
# when preloaded, against one used through glibc's own functions, found
# in libc.so.6 so that no interposer sees them; ABBA blocks of 100 round
# trips; what the library's SO_RCVTIMEO costs the kernel counts in it).
# Separate runs of a ~10 us round trip differ by several per cent here,
# which hides the issue's 1 %; bare, the same run shows the method's own
# error (~0: both sides are glibc's), and "floor" (bare, raw system calls
# as the library makes them against raw ones as glibc does) the kernel's
# part of what the library adds.
if selected pingpong_pairs; then
	echo "ping-pong in one process (libc calls, the library's when preloaded, vs glibc's own, ABBA blocks of 100; target ratio <= 1.01):"
	for pp in rw5s:vslibc rwauto:vslibc default:vslibc bare:vslibc floor:floor \
	    rw5s:poll bare:poll floor:pollfloor \
	    rw5s:epoll default:epoll bare:epoll floor:epollfloor; do
		pol=${pp%:*} mode=${pp#*:}
		PRE="" label="$pol policy"
		case $pol in
		bare) label="bare (method error)" ;;
		floor) label="floor (kernel: rw5s's calls, raw)" ;;
		*) with "$pol" ;;
		esac
		case $mode in
		poll | epoll) line=$(in_process pingpong "$mode" vslibc 400000) ;;
		*poll*) line=$(in_process pingpong "${mode%floor}" floor 400000) ;;
		*) line=$(in_process pingpong "$mode" 400000) ;;
		esac
		case $mode in
		poll*) label="poll, $label" ;;
		epoll*) label="epoll, $label" ;;
		esac
		printf '  %-40s %s\n' "$label:" "$line"
	done
	# The clock reads a steady timed round trip makes (bench/clocks.c):
	# a floor under the rw5s rows above, whatever the library's code.
	PRE=""
	in_process clocks 5000000 | {
		read -r c_fine c_coarse c_tsc c_rt &&
		    printf '  %-40s %s\n' "clock reads (a floor under rw5s):" \
		    "CLOCK_MONOTONIC $c_fine ns, _COARSE $c_coarse ns, rdtsc $c_tsc ns; a steady blocking round trip reads the fine clock twice (the write's and the read's activity stamps) and the coarse one once: $c_rt ns"
	}
fi
if [ -s "$tmp/detail" ]; then
	echo "system calls per operation, by name (strace -c, unpinned; strace slows"
	echo "the program, so a read may find data a real run would wait for):"
	cat "$tmp/detail"
fi
