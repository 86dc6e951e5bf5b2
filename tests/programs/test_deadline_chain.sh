#!/bin/sh
# test_deadline_chain.sh - deadlines across hops (SPEC 10, issue 16): the
# lesson's chain client -> A -> B -> C -> silent backend, three unmodified
# Python ThreadingHTTPServer services on loopback (scripts/deadline-chain.sh),
# the client under `resolute run --deadline 500ms`:
#   bare     C is still waiting on its backend 2 s after the client gave up;
#   library  the client fails at ~500 ms, B and C give up at the deadline
#            (>= it, < it + 150 ms + RS_SLACK_MS) within 100 ms + RS_SLACK_MS
#            of each other, no hop or backend gets a request after it;
#   fork     the same with B a process-per-request server (ForkingHTTPServer);
#   pool     a service handing requests to a worker pool does not pass the
#            deadline on (documented limitation), and nothing breaks.
# Loopback only, no namespace needed.  About 20 s in all.
set -u
cd "$(dirname "$0")/../.." || exit 2
command -v python3 >/dev/null && command -v curl >/dev/null ||
	{ echo "SKIPPED: needs python3 and curl"; exit 0; }
slack=${RS_SLACK_MS:-0}
# Under a sanitizer (make asan) every Python start-up and request is much
# slower, and 500 ms would be spent before the chain is walked.
case ${RS_LIB:-} in
*" "*) export DEADLINE_MS=3000 ;;
esac
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0
for mode in bare library fork pool; do
	SETTLE_S=2 sh scripts/deadline-chain.sh "$mode" "$dir/$mode" ||
		{ echo "FAIL: $mode: the chain did not run"; fails=$((fails + 1)); continue; }
	echo "== $mode"
	python3 tests/programs/deadline_timeline.py "$dir/$mode" --check \
	    "$mode" --slack "$slack" || {
		fails=$((fails + 1))
		cat "$dir/$mode"/resolute-*.log 2>/dev/null | head -40
	}
done
[ "$fails" -eq 0 ] && echo "PASS: test_deadline_chain" && exit 0
echo "FAIL: test_deadline_chain ($fails)"
exit 1
