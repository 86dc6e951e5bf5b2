#!/bin/sh
# run-tests.sh - runs the test suites and prints one closing line
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
# RS_ONLY="test_a test_b" runs only the tests of those names.
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
pass=0 fail=0 skip=0
failed=""

# RS_ONLY: names of the tests to run, separated by blanks; empty: all.
# shellcheck disable=SC2086 # split into names on purpose
only=$(echo ${RS_ONLY:-})

run_one() {
	name=$1
	shift
	if [ -n "$only" ]; then
		case " $only " in
		*" ${name##*/} "*) ;;
		*) return ;;
		esac
	fi
	out=$(mktemp)
	start=$(date +%s)
	timeout -k 5 "$limit" "$@" >"$out" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	if [ $rc -eq 0 ]; then
		if grep -q '^SKIPPED' "$out"; then
			skip=$((skip + 1))
			echo "skip  $name (${secs}s): $(grep -m1 '^SKIPPED' "$out")"
		else
			pass=$((pass + 1))
			echo "ok    $name (${secs}s)"
		fi
		[ -n "${RS_VERBOSE:-}" ] && cat "$out"
	else
		fail=$((fail + 1))
		failed="$failed $name"
		[ $rc -eq 124 ] && echo "TIMEOUT after ${limit}s"
		echo "FAIL  $name (${secs}s, exit $rc)"
		sed 's/^/    | /' "$out"
	fi
	rm -f "$out"
}

if [ "$what" = unit ] || [ "$what" = all ]; then
	for t in "$B"/tests/test_*; do
		[ -x "$t" ] || continue
		case $t in *.d) continue ;; esac
		if [ -n "${RS_VALGRIND:-}" ]; then
			run_one "unit/$(basename "$t") (valgrind)" valgrind -q \
				--error-exitcode=1 --leak-check=full \
				--errors-for-leak-kinds=definite "$t"
		else
			run_one "unit/$(basename "$t")" "$t"
		fi
	done
fi
if [ "$what" = integration ] || [ "$what" = all ]; then
	for t in "$B"/itests/test_*; do
		[ -x "$t" ] || continue
		case $t in *.d) continue ;; esac
		run_one "integration/$(basename "$t")" scripts/netns.sh "$t"
	done
fi
if [ "$what" = programs ] || [ "$what" = all ]; then
	for t in tests/programs/test_*.sh; do
		[ -f "$t" ] || continue
		run_one "programs/$(basename "$t" .sh)" scripts/netns.sh sh "$t"
	done
fi

# Shared retry budgets made for the tests' temporary policies outlive the
# tests (until reboot); those whose policy file is gone are removed.
[ -x "$RS_CLI" ] && "$RS_CLI" stats --prune >/dev/null 2>&1
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
