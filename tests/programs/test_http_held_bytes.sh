#!/bin/sh
# SPDX-License-Identifier: MIT
# test_http_held_bytes.sh - the request heads the library holds back to
# edit them (SPEC 10's deadline header, SPEC 9's injected Idempotency-Key)
# never lose or delay the program's bytes: a bare capture server
# (held_wire.py) records what python3 clients under the library send, and
# when.
#   deadline_header, no deadline:  nothing held: "G" then close arrives
#                                  (CPython's testCountSmall), a head's
#                                  first part arrives at once;
#   deadline_header, a deadline:   a head's beginning is held, and goes
#                                  as it is on close, shutdown, a wait for
#                                  the answer (select, recv), dup2 over
#                                  it, exit, exec, fork (once); a whole
#                                  head still gets the header once, also
#                                  while another thread waits in epoll;
#   idempotency_key: inject:       a GET's beginning goes at once; a
#                                  POST's is held, and goes on close,
#                                  shutdown, an epoll wait; a whole POST
#                                  head still gets the key once.
# Loopback only.  About 8 s.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${RS_BUILD:-$PWD/build}
CLI=${RS_CLI:-$B/resolute}
. tests/programs/rsrun.sh
command -v python3 >/dev/null || { echo "SKIPPED: needs python3"; exit 0; }
dir=$(mktemp -d)
wire=tests/programs/held_wire.py
cleanup() { [ -n "${spid:-}" ] && kill "$spid" 2>/dev/null; wait; rm -rf "$dir"; }
trap cleanup EXIT
mkfifo "$dir/ready"
timeout 60 python3 $wire server "$dir" >"$dir/ready" &
spid=$!
read -r line port <"$dir/ready"
[ "$line" = ready ] && [ -n "$port" ] || { echo "FAIL: capture server"; exit 1; }
printf 'version: 1\ndefaults:\n  deadline_header: X-Request-Deadline\n' \
    >"$dir/dl.yaml"
printf 'version: 1\ndefaults:\n  http:\n    idempotency_key: inject\n' \
    >"$dir/inject.yaml"
dl=$(($(date +%s%3N) + 60000))
fails=0 n=0
# run POLICY DEADLINE CASE: one client case; its bytes land in conn-$n.
run() {
	pol=$1 d=$2 case=$3
	n=$((n + 1))
	if [ "$d" = - ]; then
		RESOLUTE_POLICY=$dir/$pol rsrun -- timeout 20 python3 $wire \
		    client "$case" "$port" >/dev/null 2>"$dir/err"
	else
		RESOLUTE_DEADLINE=$d RESOLUTE_POLICY=$dir/$pol rsrun -- \
		    timeout 20 python3 $wire client "$case" "$port" \
		    >/dev/null 2>"$dir/err"
	fi
	[ $? = 0 ] || { echo "FAIL: $case: $(cat "$dir/err")"; fails=$((fails + 1)); }
	i=0
	while [ ! -e "$dir/conn-$n.done" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}
# expect WHAT PYTHON-CHECK: checks the last connection's bytes (b) and
# the times its pieces arrived at (t, ms after the accept, one per piece).
expect() {
	if python3 -c "import sys
b = open('$dir/conn-$n', 'rb').read()
t = [int(l.split()[0]) for l in open('$dir/conn-$n.t') if l.strip()]
P = b'GET /part HTTP/1.1\r\nHost: x\r\n'
Q = b'POST /part HTTP/1.1\r\nHost: x\r\n'
sys.exit(0 if ($2) else 1)" 2>/dev/null; then
		echo "ok: $1"
	else
		echo "FAIL: $1: $(od -c "$dir/conn-$n" 2>/dev/null | head -4) at $(tr '\n' ' ' <"$dir/conn-$n.t" 2>/dev/null)"
		fails=$((fails + 1))
	fi
}
# Without a deadline, nothing is held.
run dl.yaml - letter-close
expect "no deadline: G then close arrives" "b == b'G'"
run dl.yaml - part-close
expect "no deadline: a head's beginning then close arrives" "b == P"
run dl.yaml - part-gap
expect "no deadline: a head's first part arrives at once, not with the second" \
    "b == P + b'\r\n' and t[0] < 300 and len(t) == 2"
# With one, a head is held until it completes, or its connection ends.
run dl.yaml "$dl" letter-close
expect "deadline: G then close arrives" "b == b'G'"
run dl.yaml "$dl" part-close
expect "deadline: a held head's beginning goes on close" "b == P"
run dl.yaml "$dl" part-shutdown
expect "deadline: ... on shutdown" "b == P and t[0] < 250"
run dl.yaml "$dl" part-select
expect "deadline: ... when the program waits to read (select)" \
    "b == P and t[0] < 400"
run dl.yaml "$dl" part-read
expect "deadline: ... when the program reads" "b == P and t[0] < 400"
run dl.yaml "$dl" part-dup2
expect "deadline: ... on dup2 over it" "b == P and t[0] < 250"
run dl.yaml "$dl" part-exit
expect "deadline: ... on exit" "b == P"
run dl.yaml "$dl" part-exec
expect "deadline: ... on exec" "b == P and t[0] < 250"
run dl.yaml "$dl" part-fork
expect "deadline: ... on fork, once (the child's exit sends nothing more)" \
    "b == P + b'\r\n'"
run dl.yaml "$dl" part-gap
expect "deadline: a head in two parts: whole, with the header once" \
    "b.startswith(P) and b.count(b'X-Request-Deadline: $dl\r\n') == 1 and b.endswith(b'\r\n\r\n') and len(t) == 1 and t[0] >= 500"
run dl.yaml "$dl" part-gap-waiter
expect "deadline: another thread's waits leave this thread's head held" \
    "b.startswith(P) and b.count(b'X-Request-Deadline: $dl\r\n') == 1 and len(t) == 1"
# inject: only a POST or PATCH head is held.
run inject.yaml - part-gap
expect "inject: a GET head's first part arrives at once" \
    "b == P + b'\r\n' and t[0] < 300"
run inject.yaml - part-close
expect "inject: a GET head's beginning then close arrives" "b == P"
run inject.yaml - post-close
expect "inject: a held POST head's beginning goes on close" "b == Q"
run inject.yaml - post-shutdown
expect "inject: ... on shutdown" "b == Q and t[0] < 250"
run inject.yaml - post-epoll
expect "inject: ... when the program waits to read (epoll)" \
    "b == Q and t[0] < 400"
run inject.yaml - post-gap
expect "inject: a POST head in two parts: whole, with a key once" \
    "b.startswith(Q) and b.count(b'Idempotency-Key: ') == 1 and b'Content-Length: 0\r\n' in b and b.endswith(b'\r\n\r\n') and len(t) == 1"
[ "$fails" -eq 0 ] && echo "PASS: test_http_held_bytes" && exit 0
echo "FAIL: test_http_held_bytes ($fails)"
exit 1
