#!/bin/sh
# SPDX-License-Identifier: MIT
# test_http_reconnect.sh - HTTP retries that reconnect on the program's
# descriptor (http_reconnect_client.c against http_reconnect_server.py):
#
# - after a retry on a new connection, the next read still times out with
#   ETIMEDOUT at read_timeout, and the program's SO_RCVTIMEO reads back 0:
#   the reconnect used to leave the library's kernel timer on the socket,
#   which the new entry then took for the program's own (EAGAIN at 850 ms);
# - another thread closing the descriptor while the reconnect waits (its
#   SYN dropped by a full accept queue) and connecting anew on the same
#   number: the blocked read fails with EBADF, and the new connection keeps
#   its own retries (the old state used to end up on its entry: its 503
#   reached the program, and the blocked read said ECONNRESET).
#
# About 6 s.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${RS_BUILD:-$PWD/build}
LIB=${RS_LIB:-$B/libresolute.so}
tmp=$(mktemp -d /tmp/rs-hrec-XXXXXX)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
if ! ${CC:-cc} -O2 -pthread -o "$tmp/client" \
    tests/programs/http_reconnect_client.c; then
	echo "FAIL  http_reconnect_client.c does not build"
	exit 1
fi
fail=0

# serve MODE: starts the server; its port(s) in $tmp/MODE.
serve() {
	python3 tests/programs/http_reconnect_server.py "$1" >"$tmp/$1" &
	pids="$pids $!"
	i=0
	while [ ! -s "$tmp/$1" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}

# check LABEL PATTERN...: every pattern is a line of $tmp/out.
check() {
	label=$1
	shift
	for p in "$@"; do
		if ! grep -q "^$p\$" "$tmp/out"; then
			echo "FAIL  $label: no line '$p' in: $(tr '\n' ' ' <"$tmp/out")"
			fail=1
			return
		fi
	done
	echo "ok    $label: $(tr '\n' ' ' <"$tmp/out")"
}

printf 'version: 1\ndefaults:\n  read_timeout: 1s\nhosts:\n  - match: 127.0.0.1\n    http: {}\n' \
	>"$tmp/again.yaml"
serve again
timeout 20 env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$tmp/again.yaml" \
	RESOLUTE_LOG=error "$tmp/client" again "$(cat "$tmp/again")" \
	>"$tmp/out" 2>&1
# The 3rd request: ETIMEDOUT after 1000-1999 ms, SO_RCVTIMEO 0 throughout.
check "the read after a retry that reconnected times out as before" \
	'1 HTTP/1.1 200 OK|[0-9]*|0' '2 HTTP/1.1 200 OK|[0-9]*|0' \
	'3 Connection timed out|1[0-9][0-9][0-9]|0'

printf 'version: 1\ndefaults:\n  connect_timeout: 1s\n  attempts: 1\nhosts:\n  - match: 127.0.0.1\n    http: {}\n' \
	>"$tmp/stuck.yaml"
serve stuck
read -r p1 p2 <"$tmp/stuck"
timeout 20 env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$tmp/stuck.yaml" \
	RESOLUTE_LOG=error "$tmp/client" stuck "$p1" "$p2" >"$tmp/out" 2>&1
if grep -q '^reused no' "$tmp/out"; then
	echo "SKIPPED descriptor closed during a reconnect: the number was not reused"
else
	check "a descriptor closed while its retry reconnects" \
		'reused yes' 'a Bad file descriptor' 'b HTTP/1.1 200 OK'
fi
exit $fail
