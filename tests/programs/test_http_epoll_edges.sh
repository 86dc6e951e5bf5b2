#!/bin/sh
# SPDX-License-Identifier: MIT
# test_http_epoll_edges.sh - a non-blocking client whose responses the
# library judges (SPEC 9: http on its rule) sees from epoll what it sees
# bare: level-triggered, EPOLLOUT while a response is judged (the library
# hides the response, not the room to write); edge-triggered, each edge
# once (the library's registration, put back with EPOLL_CTL_MOD once the
# response was shown, re-armed it and reported it again); one-shot, spent
# by the first event.  http_edges.py prints the waits; both runs must
# print the same.  Loopback only.  About 6 s.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${RS_BUILD:-$PWD/build}
CLI=${RS_CLI:-$B/resolute}
. tests/programs/rsrun.sh
command -v python3 >/dev/null || { echo "SKIPPED: needs python3"; exit 0; }
dir=$(mktemp -d)
prog=tests/programs/http_edges.py
cleanup() { [ -n "${spid:-}" ] && kill "$spid" 2>/dev/null; wait; rm -rf "$dir"; }
trap cleanup EXIT
mkfifo "$dir/ready"
timeout 60 python3 $prog server >"$dir/ready" &
spid=$!
read -r line port <"$dir/ready"
[ "$line" = ready ] && [ -n "$port" ] || { echo "FAIL: server"; exit 1; }
printf 'version: 1\ndefaults:\n  http:\n    retry_on_status: [503]\n' \
    >"$dir/http.yaml"
fails=0
for mode in lt et oneshot; do
	timeout 20 python3 $prog client $mode "$port" >"$dir/bare" 2>&1
	RESOLUTE_POLICY=$dir/http.yaml rsrun -- timeout 20 python3 $prog \
	    client $mode "$port" >"$dir/lib" 2>&1
	if cmp -s "$dir/bare" "$dir/lib" && grep -q "^w9 " "$dir/bare"; then
		echo "ok: $mode: the same waits as bare"
	else
		echo "FAIL: $mode: bare, then under the library:"
		paste "$dir/bare" "$dir/lib" | sed 's/^/    /'
		fails=$((fails + 1))
	fi
done
[ "$fails" -eq 0 ] && echo "PASS: test_http_epoll_edges" && exit 0
echo "FAIL: test_http_epoll_edges ($fails)"
exit 1
