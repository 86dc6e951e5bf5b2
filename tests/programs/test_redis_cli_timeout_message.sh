#!/bin/sh
# SPDX-License-Identifier: MIT
# test_redis_cli_timeout_message.sh - redis-cli names the real cause when
# its connect fails under the library, as it does bare.
#
# redis-cli (hiredis) connects non-blocking, polls, calls connect() again
# and then reads SO_ERROR.  Against 127.0.0.2 (SYNs dropped, netns only)
# with connect_timeout 500ms and 2 attempts it must print "Connection timed
# out" after 2 x (500 + 100 + 500) ms (redis-cli tries twice), never a "Connection reset by peer" left
# behind by the library's dissolving of the last attempt; bare, once the
# kernel gives up (one SYN retry in this namespace: 2 x 3 s), it prints the
# same.  Against a closed port both print "Connection refused".  Every
# command is bounded.  RS_BUILD and RS_LIB come from scripts/run-tests.sh.
set -u
: "${RS_BUILD:?set by scripts/run-tests.sh}"
RS_LIB=${RS_LIB:-$RS_BUILD/libresolute.so}
SLACK=$((300 + ${RS_SLACK_MS:-0}))
[ "$SLACK" -lt 300 ] && SLACK=300
STARTUP=300
fails=0
# shellcheck source=tests/programs/lib.sh
. "$(dirname "$0")/lib.sh"

if ! command -v redis-cli >/dev/null 2>&1; then
	echo "SKIPPED: redis-cli (redis-tools) not installed"
	exit 0
fi
if [ "${RS_NETNS:-}" != 1 ]; then
	echo "SKIPPED: needs scripts/netns.sh (root and nft)"
	exit 0
fi
tmp=$(mktemp -d /tmp/rs-redis-cli-XXXXXX)
syn=$(cat /proc/sys/net/ipv4/tcp_syn_retries)
# shellcheck disable=SC2317  # called by the trap below
cleanup() {
	echo "$syn" >/proc/sys/net/ipv4/tcp_syn_retries
	rm -rf "$tmp"
}
trap cleanup EXIT

cat >"$tmp/policy.yaml" <<'YAML'
version: 1
defaults:
  connect_timeout: 500ms
  attempts: 2
  retry_budget: {ratio: 1, min_per_second: 1000, window: 10s, scope: process}
  backoff: {base: 100ms, cap: 1s, multiplier: 2, jitter: none}
YAML

# ping HOST PORT [preload]: sets OUT to redis-cli's output, MS to its run
# time.
ping() {
	t0=$(now_ms)
	if [ "${3:-}" = preload ]; then
		OUT=$(LD_PRELOAD=$RS_LIB RESOLUTE_POLICY=$tmp/policy.yaml \
		    RESOLUTE_LOG=error timeout 20 redis-cli -h "$1" -p "$2" \
		    PING 2>&1)
	else
		OUT=$(timeout 20 redis-cli -h "$1" -p "$2" PING 2>&1)
	fi
	MS=$(($(now_ms) - t0))
}

# expect WHAT WANT OUT: WANT must be in OUT, and no other cause.
expect() {
	if echo "$3" | grep -q "$2" && ! echo "$3" | grep -qi reset; then
		ok "$1: \"$2\" ($MS ms)"
	else
		fail "$1: \"$3\" ($MS ms), expected \"$2\""
	fi
}

ping 127.0.0.2 6379 preload
expect "redis-cli under resolute, SYNs dropped" "Connection timed out" "$OUT"
hi=$((2200 + STARTUP + SLACK))
if [ "$MS" -ge 2200 ] && [ "$MS" -lt $hi ]; then
	ok "redis-cli under resolute gave up after $MS ms (window 2200-$hi)"
else
	fail "redis-cli under resolute gave up after $MS ms (window 2200-$hi)"
fi
echo 1 >/proc/sys/net/ipv4/tcp_syn_retries
ping 127.0.0.2 6379
expect "bare redis-cli, SYNs dropped (kernel gives up)" \
    "Connection timed out" "$OUT"
echo "$syn" >/proc/sys/net/ipv4/tcp_syn_retries
# Nothing listens on loopback in this namespace.
ping 127.0.0.1 1 preload
expect "redis-cli under resolute, refused" "Connection refused" "$OUT"
ping 127.0.0.1 1
expect "bare redis-cli, refused" "Connection refused" "$OUT"
echo "$fails failed"
[ $fails -eq 0 ]
