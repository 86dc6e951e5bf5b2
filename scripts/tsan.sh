#!/bin/sh
# SPDX-License-Identifier: MIT
# tsan.sh - the threaded integration tests against a ThreadSanitizer build
# of the library and of the test programs (`make tsan` builds build-tsan).
#
#   B=build-tsan scripts/tsan.sh
#
# Every sanitized process writes its reports to a file of its own
# (log_path), so a report fails the run even where a test does not look at
# its client's exit status.  Reports matching tests/tsan.supp are
# suppressed; that file gives the reason for each entry.
set -u
cd "$(dirname "$0")/.." || exit 2
B=${B:-build-tsan}
logs=$(mktemp -d /tmp/rs-tsan-XXXXXX)
trap 'rm -rf "$logs"' EXIT INT TERM
# The tests that run threads inside a preloaded program (the 64-thread
# storm, a fork while another thread edits epoll, a writer thread beside a
# wait) or thousands of descriptors in one loop.
tests=${RS_TSAN_TESTS:-"test_harm_proc test_harm_fortify test_review test_wait
test_breaker_hammer
test_wait_many"}
export TSAN_OPTIONS="log_path=$logs/tsan:halt_on_error=0:exitcode=66:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
B=$B RS_TSAN=1 RS_ONLY="$tests" scripts/run-tests.sh integration
status=$?
n=0
for f in "$logs"/tsan.*; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	echo "---- ThreadSanitizer report ($(basename "$f")):"
	cat "$f"
done
echo "tsan: $n process(es) with reports"
[ $n = 0 ] && [ $status = 0 ]
