#!/bin/sh
# SPDX-License-Identifier: MIT
# run-tests.sh - runs the test suites and ends with the line
# "N passed, N failed, N skipped".
#
#   scripts/run-tests.sh [unit|integration|programs|all]
#
# unit:        build/tests/test_*       cmocka, pure modules, no preloading;
#                                       test_engine_* run the engines
#                                       against a scripted kernel
# integration: build/itests/test_*      cmocka orchestrators that start the
#                                       peer and preloaded clients themselves
# programs:    tests/programs/test_*.sh real programs (curl, wget, nc, python3,
#                                       node) under the library
# Each test runs under a time limit so that a hang fails instead of blocking.
# B (build dir) and RS_VALGRIND / RS_ASAN / RS_TSAN adjust how tests run;
# RS_ONLY="test_a test_b" runs only the tests of those names; RS_JOBS=N runs
# N at once (below), RS_SERIAL="test_c" keeps those out of the pool.  The
# closing lines give each tier's summed test time and the wall-clock time;
# each test's time is kept in $B/test-times for the next run's order.
# RS_SLACK_MS is added to every upper timing bound of every test, on top of
# the test's own slack: valgrind and the sanitizers set it to 1000 ms.
set -u
cd "$(dirname "$0")/.." || exit 2
B=${B:-build}
export RS_BUILD="$PWD/$B"
export RS_LIB="$PWD/$B/libresolute.so"
export RS_CLI="$PWD/$B/resolute"
# An ASan-built library needs the ASan runtime loaded before anything else:
# LD_PRELOAD takes a space-separated list, so RS_LIB becomes two paths (tests
# that need the library's own path take the last word).  Programs we do not
# own (curl, python3) leak by design and were not linked with ASan first.
if [ -n "${RS_ASAN:-}" ]; then
	RS_LIB="$(${CC:-cc} -print-file-name=libasan.so) $RS_LIB"
	export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:verify_asan_link_order=0:abort_on_error=0}"
	export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
	# Programs start slower with the sanitizer runtime (python3: ~400 ms).
	export RS_SLACK_MS="${RS_SLACK_MS:-1000}"
fi
# A ThreadSanitizer build likewise wants its runtime loaded first; the test
# programs are built with it too (make tsan), so it is there anyway.
if [ -n "${RS_TSAN:-}" ]; then
	RS_LIB="$(${CC:-cc} -print-file-name=libtsan.so) $RS_LIB"
	export RS_SLACK_MS="${RS_SLACK_MS:-1000}"
fi
if [ -n "${RS_VALGRIND:-}" ]; then
	export RS_SLACK_MS="${RS_SLACK_MS:-1000}"
fi
# The tests run with a /dev/shm of their own when root can make one: the
# machine-wide retry budgets and counters live there, and segments left by
# other processes of the same user (an earlier run, another checkout's
# tests, a running service) would otherwise show up in what `resolute stats`
# prints and change what the tests see.
if [ -z "${RS_PRIVATE_SHM:-}" ] && [ "$(id -u)" = 0 ] &&
    unshare -m true 2>/dev/null; then
	export RS_PRIVATE_SHM=1
	exec unshare -m sh -c 'mount --make-rprivate / &&
		mount -t tmpfs -o mode=1777,size=256m tmpfs /dev/shm &&
		exec "$0" "$@"' "$0" "$@"
fi
what=${1:-all}
limit=${RS_TEST_TIMEOUT:-300}
# RS_JOBS: how many tests run at once (1: one after another, in order).
# Every test has a network namespace of its own (scripts/netns.sh) and, as
# root, a /dev/shm of its own (below), so tests cannot see each other's
# ports or retry budgets.  Most of the suite's time is spent waiting on
# purpose (timeouts, backoff, Retry-After), which is what running several
# at once wins back.  The tests named in RS_SERIAL run alone, after the
# others: those whose timed windows hold CPU-bound work.
jobs=${RS_JOBS:-1}
case $jobs in '' | *[!0-9]* | 0) echo "run-tests.sh: RS_JOBS must be a positive number" >&2; exit 2 ;; esac
# Under ASan they are the python3 clients of test_clients_io (with the
# sanitizer runtime python3 takes ~400 ms of CPU to start, inside a 1 s
# read timeout's window) and its 200 MB download through the sanitized
# library, test_deadline_chain's three python3 services inside a 3 s
# deadline, test_http_retry's asyncio client (two retried GETs within
# 2 s + 1 s), and the MariaDB server and clients of test_services_mariadb.
# Run with the others, each missed a window once under load.  Alone they
# still can when the machine is busy.
serial_asan="test_clients_io test_deadline_chain test_http_retry
test_services_mariadb"
[ -n "${RS_ASAN:-}" ] || serial_asan=""
# shellcheck disable=SC2086 # split into names on purpose
serial=$(echo ${RS_SERIAL-$serial_asan})
# RS_ONLY: names of the tests to run, separated by blanks; empty: all.
# shellcheck disable=SC2086 # split into names on purpose
only=$(echo ${RS_ONLY:-})
res=$(mktemp -d /tmp/rs-tests-XXXXXX) || exit 2
trap 'rm -rf "$res"' EXIT
trap 'exit 130' INT TERM
seq=0
phase=all
tab=$(printf '\t')

# A /dev/shm of each test's own when root made the run's private one
# above: one test's budgets and counters are not another's.
shm_each=0
[ "${RS_PRIVATE_SHM:-}" = 1 ] && [ "$(id -u)" = 0 ] && shm_each=1
private_shm() {
	if [ $shm_each = 1 ]; then
		unshare -m sh -c 'mount -t tmpfs -o mode=1777,size=256m tmpfs \
			/dev/shm && exec "$@"' rs-shm "$@"
	else
		"$@"
	fi
}

# run_case ID TIER NAME COMMAND...: runs one test under the time limit and
# leaves its outcome in $res/ID.st ("pass|fail|skip TIER SECONDS") and its
# lines in $res/ID.txt, printed at once (under a lock: jobs end together).
run_case() {
	id=$1 tier=$2 name=$3
	shift 3
	out=$res/$id.out
	start=$(date +%s)
	private_shm timeout -k 5 "$limit" "$@" >"$out" 2>&1 3>&-
	rc=$?
	secs=$(( $(date +%s) - start ))
	if [ $rc -eq 0 ] && grep -q '^SKIPPED' "$out"; then
		st=skip
		echo "skip  $name (${secs}s): $(grep -m1 '^SKIPPED' "$out")"
	elif [ $rc -eq 0 ]; then
		st=pass
		echo "ok    $name (${secs}s)"
		[ -n "${RS_VERBOSE:-}" ] && cat "$out"
	else
		st=fail
		[ $rc -eq 124 ] && echo "TIMEOUT after ${limit}s"
		echo "FAIL  $name (${secs}s, exit $rc)"
		sed 's/^/    | /' "$out"
	fi >"$res/$id.txt"
	echo "$st $tier $secs $name" >"$res/$id.st"
	flock "$res/lock" cat "$res/$id.txt"
	rm -f "$out"
}

# run_one TIER NAME COMMAND...: runs the test now, or hands it to the job
# pool; RS_ONLY and the phase (RS_SERIAL) decide whether it runs here.
run_one() {
	tier=$1 name=$2
	base=${name#*/}
	base=${base%% *}
	if [ -n "$only" ]; then
		case " $only " in *" $base "*) ;; *) return ;; esac
	fi
	case " $serial " in *" $base "*) s=serial ;; *) s=pool ;; esac
	[ "$phase" = all ] || [ "$phase" = "$s" ] || return
	seq=$((seq + 1))
	id=$(printf '%04d' $seq)
	if [ "$phase" = pool ]; then
		shift 2
		printf '%s\t%s\t%s\t%s\n' "$id" "$tier" "$name" "$*" >>"$res/queue"
	else
		run_case "$id" "$@"
	fi
}

# The pool: the queued tests longest first, by the times of an earlier run
# ($B/test-times, else build/test-times; tests it does not know go first,
# in tier order), each started when one of the jobs' tokens is free.
times_file=$B/test-times
pool_run() {
	[ -f "$res/queue" ] || return 0
	known=$times_file
	[ -f "$known" ] || known=build/test-times
	[ -f "$known" ] || known=/dev/null
	awk -F'\t' -v k="$known" 'FILENAME == k { t[$2] = $1; next }
		{ print (($3 in t) ? t[$3] : 1000000 - FNR) "\t" $0 }' \
	    "$known" "$res/queue" | sort -t "$tab" -k1,1nr >"$res/sorted"
	while IFS=$tab read -r _ id tier name cmd <&4; do
		read -r _ <&3
		# shellcheck disable=SC2086 # the command's words, split again
		{ run_case "$id" "$tier" "$name" $cmd; echo >&3; } 4<&- &
	done 4<"$res/sorted"
	wait
}

run_unit() {
	for t in "$B"/tests/test_*; do
		[ -x "$t" ] || continue
		case $t in *.d) continue ;; esac
		if [ -n "${RS_VALGRIND:-}" ]; then
			run_one unit "unit/$(basename "$t") (valgrind)" valgrind -q \
				--error-exitcode=1 --leak-check=full \
				--errors-for-leak-kinds=definite "$t"
		else
			run_one unit "unit/$(basename "$t")" "$t"
		fi
	done
}
run_integration() {
	for t in "$B"/itests/test_*; do
		[ -x "$t" ] || continue
		case $t in *.d) continue ;; esac
		run_one integration "integration/$(basename "$t")" scripts/netns.sh "$t"
	done
}
run_programs() {
	for t in tests/programs/test_*.sh; do
		[ -f "$t" ] || continue
		run_one programs "programs/$(basename "$t" .sh)" scripts/netns.sh sh "$t"
	done
}
# The tiers asked for, in order.  With a pool the real programs go first:
# they hold the longest tests, and the short unit tests fill the end.
tiers() {
	case $what in
	all) if [ "$jobs" -gt 1 ]; then echo programs integration unit
		else echo unit integration programs; fi ;;
	unit | integration | programs) echo "$what" ;;
	*) echo "run-tests.sh: unknown tier '$what'" >&2; return 2 ;;
	esac
}
order=$(tiers) || exit 2
wall0=$(date +%s)
if [ "$jobs" -gt 1 ]; then
	# A fifo holding one token per job is the pool's semaphore.
	mkfifo "$res/tokens" && exec 3<>"$res/tokens" || exit 2
	i=0
	while [ $i -lt "$jobs" ]; do echo >&3; i=$((i + 1)); done
	phase=pool
	for tier in $order; do "run_$tier"; done
	pool_run
	exec 3>&-
	phase=serial
	for tier in $order; do "run_$tier"; done
else
	for tier in $order; do "run_$tier"; done
fi
wall=$(( $(date +%s) - wall0 ))

# Shared retry budgets made for the tests' temporary policies outlive the
# tests (until reboot); those whose policy file is gone are removed.
[ -x "$RS_CLI" ] && "$RS_CLI" stats --prune >/dev/null 2>&1
# The time each tier's tests took (summed; with a pool they overlap, so
# the wall-clock time is printed too), the failed tests and the tally.
cat "$res"/*.st 2>/dev/null >"$res/all" || true
# This run's times replace those of the same tests in $B/test-times.
if [ -s "$res/all" ] && [ -d "$B" ]; then
	[ -f "$times_file" ] || : >"$times_file"
	awk -v OFS='\t' 'NR == FNR { sub(/^[^ ]+ [^ ]+ /, ""); s = $1;
		sub(/^[^ ]+ /, ""); t[$0] = s; next }
		!($2 in t) { print } END { for (n in t) print t[n], n }' \
	    "$res/all" FS='\t' "$times_file" >"$res/times" &&
	    cp "$res/times" "$times_file"
fi
awk -v wall="$wall" -v jobs="$jobs" '
	{ n[$1]++; t[$2] += $3; c[$2]++ }
	$1 == "fail" { sub(/^[^ ]+ [^ ]+ [^ ]+ /, ""); failed = failed " " $0 }
	END {
		line = ""
		split("unit integration programs", tiers)
		for (i = 1; i <= 3; i++)
			if ((k = tiers[i]) in t)
				line = line sprintf("%s %d tests %ds, ", k, c[k], t[k])
		if (line != "") printf "time: %swall %ds (RS_JOBS=%d)\n", line, wall, jobs
		if (failed != "") print "failed:" failed
		printf "%d passed, %d failed, %d skipped\n", n["pass"], n["fail"], n["skip"]
		exit (n["fail"] > 0)
	}' "$res/all"
