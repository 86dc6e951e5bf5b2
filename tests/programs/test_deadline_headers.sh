#!/bin/sh
# SPDX-License-Identifier: MIT
# test_deadline_headers.sh - the outbound half of SPEC 10 on the wire: a
# bare capture server (deadline_wire.py) records what clients under the
# library send when their rule sets deadline_header and a process deadline
# applies (RESOLUTE_DEADLINE):
#   curl, http.client     the header once per request, the deadline's value,
#                         on each request of a keep-alive connection;
#   a head in two writes  held, then sent whole with the header once;
#   the program's own     an earlier value kept, a later one replaced;
#   not HTTP (Redis)      byte for byte as written, nothing added;
#   no deadline, or a rule with deadline_header: off: nothing added.
# Loopback only.  About 5 s.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${RS_BUILD:-$PWD/build}
CLI=${RS_CLI:-$B/resolute}
. tests/programs/rsrun.sh
command -v python3 >/dev/null && command -v curl >/dev/null ||
	{ echo "SKIPPED: needs python3 and curl"; exit 0; }
dir=$(mktemp -d)
wire=tests/programs/deadline_wire.py
cleanup() { for p in ${spid:-}; do kill "$p" 2>/dev/null; done; wait; rm -rf "$dir"; }
trap cleanup EXIT
mkfifo "$dir/ready"
# On a port of the kernel's choice: no other test's can collide with it.
timeout 60 python3 $wire server 0 "$dir" >"$dir/ready" &
spid=$!
read -r line port <"$dir/ready"
[ "$line" = ready ] && [ -n "$port" ] || { echo "FAIL: capture server"; exit 1; }
cat >"$dir/on.yaml" <<POL
version: 1
defaults:
  deadline_header: X-Request-Deadline
POL
cat >"$dir/off.yaml" <<POL
version: 1
defaults:
  deadline_header: X-Request-Deadline
hosts:
  - match: 127.0.0.1:$port
    deadline_header: off
POL
dl=$(($(date +%s%3N) + 60000))
fails=0 n=0
# run POLICY DEADLINE CMD...: one client; its bytes land in conn-$n.
run() {
	pol=$1 d=$2
	shift 2
	n=$((n + 1))
	if [ "$d" = - ]; then
		RESOLUTE_POLICY=$dir/$pol rsrun -- timeout 20 "$@" >/dev/null 2>"$dir/err" ||
			{ echo "FAIL: client $n: $(cat "$dir/err")"; fails=$((fails + 1)); }
	else
		RESOLUTE_DEADLINE=$d RESOLUTE_POLICY=$dir/$pol rsrun -- timeout 20 "$@" \
		    >/dev/null 2>"$dir/err" ||
			{ echo "FAIL: client $n: $(cat "$dir/err")"; fails=$((fails + 1)); }
	fi
	# The capture server may still be reading the connection: its bytes
	# are whole once it says the connection ended (bounded: 5 s).
	i=0
	while [ ! -e "$dir/conn-$n.done" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}
# expect N WHAT PYTHON-CHECK: checks conn-N's bytes (b) in Python.
expect() {
	if python3 -c "import sys; b = open('$dir/conn-$1', 'rb').read(); \
h = b'X-Request-Deadline: '; sys.exit(0 if ($3) else 1)" 2>/dev/null; then
		echo "ok: $2"
	else
		echo "FAIL: $2: $(head -c 400 "$dir/conn-$1" 2>/dev/null | od -c | head -8)"
		fails=$((fails + 1))
	fi
}
. tests/programs/sanitizer.sh
if usable curl --version; then
	run on.yaml $dl curl -sS "http://127.0.0.1:$port/curl"
	expect $n "curl: the header once, the deadline's value" \
	    "b.count(h) == 1 and (h + b'$dl\r\n') in b"
fi
run on.yaml $dl python3 $wire client plain $port
expect $n "http.client: the header once, the deadline's value" \
    "b.count(h) == 1 and (h + b'$dl\r\n') in b"
run on.yaml $dl python3 $wire client keepalive $port
expect $n "keep-alive: once on each of two requests" \
    "b.count(h + b'$dl\r\n') == 2 and b.count(b'GET ') == 2"
run on.yaml $dl python3 $wire client split $port
expect $n "a head in two writes: whole, the header once" \
    "b.count(h) == 1 and b.startswith(b'GET /split HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\n') and b.endswith(b'\r\n\r\n')"
run on.yaml $dl python3 $wire client earlier $port
expect $n "the program's earlier value is kept" \
    "b.count(h) == 1 and (h + b'1000\r\n') in b"
run on.yaml $dl python3 $wire client later $port
expect $n "the program's later value is replaced" \
    "b.count(h) == 1 and (h + b'$dl\r\n') in b"
run on.yaml $dl python3 $wire client redis $port
expect $n "not HTTP: byte for byte" \
    "b == b'*1\r\n\$4\r\nPING\r\nGET /not-a-request HTTP/1.1\r\n\r\n'"
run on.yaml - python3 $wire client plain $port
expect $n "no deadline: no header" "h not in b and b.startswith(b'GET /1')"
run off.yaml $dl python3 $wire client plain $port
expect $n "deadline_header: off: no header" "h not in b and b.startswith(b'GET /1')"
# With HTTP retries (SPEC 9) on the same rule: the 503 is retried by the
# library, and the replay carries the header once too.
# On a port of the kernel's choice too (port + 1 may be a client's).
timeout 30 python3 tests/programs/http_server.py \
    --port-file "$dir/hport" --lifetime 25 >/dev/null 2>&1 &
spid="$spid $!"
i=0
while [ ! -s "$dir/hport" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
hport=$(cat "$dir/hport" 2>/dev/null)
[ -n "$hport" ] || { echo "FAIL: http_server.py did not start"; exit 1; }
cat >"$dir/retry.yaml" <<POL
version: 1
defaults:
  deadline_header: X-Request-Deadline
  http:
    retry_on_status: [503]
    attempts: 3
POL
RESOLUTE_DEADLINE=$dl RESOLUTE_POLICY=$dir/retry.yaml rsrun -- timeout 20 \
    python3 $wire get "http://127.0.0.1:$hport/t/dl/503/1/-/ka/cl" \
    >"$dir/retry.code" 2>"$dir/err"
if [ "$(cat "$dir/retry.code")" = 200 ] && python3 -c "
import json, sys, urllib.request
s = json.load(urllib.request.urlopen('http://127.0.0.1:$hport/_stats/dl'))
sys.exit(0 if s['deadlines'] == [['$dl'], ['$dl']] else 1)"; then
	echo "ok: a retried request's replay carries the header once too"
else
	echo "FAIL: replay: $(cat "$dir/retry.code") $(cat "$dir/err")"
	fails=$((fails + 1))
fi
[ "$fails" -eq 0 ] && echo "PASS: test_deadline_headers" && exit 0
echo "FAIL: test_deadline_headers ($fails)"
exit 1
