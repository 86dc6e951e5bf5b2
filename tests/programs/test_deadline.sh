#!/bin/sh
# SPDX-License-Identifier: MIT
# test_deadline.sh - a process deadline (RESOLUTE_DEADLINE, SPEC §3) bounds
# a whole process tree: a shell script run under
#	resolute run --deadline 2s -- sh -c 'CLIENT; CLIENT'
# against the blackholed 127.0.0.2 (SYNs dropped, so each connect would
# hang for connect_timeout, 10 s here) ends near 2 s: the first client
# gives up at the deadline, the second starts after it and fails at once.
# The clients are rsclient (a blocking connect) and curl (a non-blocking
# connect and poll()).  Also: a nested `resolute run --deadline` never
# extends the deadline it inherits, but does shorten it.
#
# Needs the fault namespace (root; scripts/netns.sh), else SKIPPED.
# Timing: >= 2000 ms and < 2000 + 600 + RS_SLACK_MS (process start-ups).
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${RS_BUILD:-$PWD/build}
CLI=${RS_CLI:-$B/resolute}
CLIENT=$B/itests/rsclient
if [ "${RS_NETNS:-}" != 1 ]; then
	echo "SKIPPED: needs the fault namespace (root, nft; scripts/netns.sh)"
	exit 0
fi
for f in "$CLI" "$CLIENT"; do
	[ -x "$f" ] || { echo "FAIL: $f is not built"; exit 1; }
done
unset RESOLUTE_DEADLINE RESOLUTE_POLICY RESOLUTE_DISABLE LD_PRELOAD
# RS_LIB may be "SANITIZER-RUNTIME LIBRARY" (make asan): resolute run takes
# the library alone and keeps an LD_PRELOAD it finds, so the runtime goes
# there.
lib=${RS_LIB:-$B/libresolute.so}
export RESOLUTE_LIB="${lib##* }"
pre=""
[ "$lib" != "${lib##* }" ] && pre="${lib% *}"
cli() {
	if [ -n "$pre" ]; then
		LD_PRELOAD="$pre" "$CLI" "$@"
	else
		"$CLI" "$@"
	fi
}
tmp=$(mktemp -d)
# The budget segments made for this test's policy are removed at the end.
ls /dev/shm >"$tmp/shm-before" 2>/dev/null
cleanup() {
	for f in /dev/shm/resolute-"$(id -u)"-*; do
		[ -e "$f" ] || continue
		grep -qxF "${f#/dev/shm/}" "$tmp/shm-before" || rm -f "$f"
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fails=0
slack=$((600 + 150 + ${RS_SLACK_MS:-0}))
cat >"$tmp/policy.yaml" <<'EOF'
version: 1
defaults:
  connect_timeout: 10s
  attempts: 3
  connect_budget: 30s
EOF

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

now_ms() {
	date +%s%3N
}

# within NAME START LOW HIGH: the time since START is in [LOW, HIGH).
within() {
	took=$(($(now_ms) - $2))
	echo "$1: ${took} ms"
	if [ "$took" -lt "$3" ] || [ "$took" -ge "$4" ]; then
		fail "$1 took $took ms, expected [$3, $4)"
	fi
}

# script CLIENT-COMMAND: two clients in a row, each printing its status.
script() {
	printf '%s; echo "first=$?"; %s; echo "second=$?"' "$1" "$1"
}

run_case() {
	name=$1
	shift
	start=$(now_ms)
	"$@" >"$tmp/out" 2>&1
	within "$name" "$start" 2000 $((2000 + slack))
	grep -q '^first=[1-9]' "$tmp/out" ||
		fail "$name: first client did not fail: $(cat "$tmp/out")"
	grep -q '^second=[1-9]' "$tmp/out" ||
		fail "$name: second client did not fail: $(cat "$tmp/out")"
}

blocking="$CLIENT 127.0.0.2 9 connect"
run_case "blocking connects, resolute run --deadline 2s" \
	cli run --policy "$tmp/policy.yaml" --deadline 2s -- \
	sh -c "$(script "$blocking")"
grep -q 'no time left' "$tmp/out" ||
	fail "no 'no time left' line: $(cat "$tmp/out")"

# shellcheck source=tests/programs/sanitizer.sh
. tests/programs/sanitizer.sh
if command -v curl >/dev/null 2>&1 && usable curl --version; then
	# curl's own limit only keeps a failure of this test short.
	fetch="curl -sS -m 8 -o /dev/null http://127.0.0.2:9/"
	run_case "curl, resolute run --deadline 2s" \
		cli run --policy "$tmp/policy.yaml" --deadline 2s -- \
		sh -c "$(script "$fetch")"
else
	echo "curl not installed: curl case not run"
fi

# The same by hand, as SPEC §3 describes the variable.
start=$(now_ms)
RESOLUTE_DEADLINE=$((start + 2000)) RESOLUTE_POLICY=$tmp/policy.yaml \
	LD_PRELOAD=$lib sh -c "$(script "$blocking")" >"$tmp/out" 2>&1
within "blocking connects, RESOLUTE_DEADLINE by hand" "$start" 2000 \
	$((2000 + slack))

# Nested: an inner, later --deadline keeps the outer one ...
run_case "outer 2s, inner 10s" \
	cli run --policy "$tmp/policy.yaml" --deadline 2s -- \
	"$CLI" run --deadline 10s -- sh -c "$(script "$blocking")"
before=$(now_ms)
outer=$(cli run --deadline 5s -- sh -c 'echo "$RESOLUTE_DEADLINE"')
nested=$(RESOLUTE_DEADLINE=$outer cli run --deadline 60s -- \
	sh -c 'echo "$RESOLUTE_DEADLINE"')
[ "$nested" = "$outer" ] ||
	fail "inner --deadline 60s changed RESOLUTE_DEADLINE $outer to $nested"
if [ "$outer" -lt $((before + 5000)) ] ||
    [ "$outer" -ge $((before + 5000 + slack)) ]; then
	fail "--deadline 5s set RESOLUTE_DEADLINE=$outer at $before"
fi
# ... and an inner, earlier one shortens it.
run_case "outer 10s, inner 2s" \
	cli run --policy "$tmp/policy.yaml" --deadline 10s -- \
	"$CLI" run --deadline 2s -- sh -c "$(script "$blocking")"
shorter=$(RESOLUTE_DEADLINE=$outer cli run --deadline 1s -- \
	sh -c 'echo "$RESOLUTE_DEADLINE"')
[ "$shorter" -lt "$outer" ] ||
	fail "inner --deadline 1s did not shorten $outer (got $shorter)"

[ "$fails" -eq 0 ] || exit 1
echo "all deadline cases passed"
