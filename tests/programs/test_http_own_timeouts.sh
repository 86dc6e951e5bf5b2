#!/bin/sh
# SPDX-License-Identifier: MIT
# test_http_own_timeouts.sh - blocking reads on the connections of an
# `http:` rule (the status retry engine, httpretry.c, waits for the
# response itself) must keep what the program's own read would do:
#
# - perl's alarm 1 (a handler without SA_RESTART) and a C client's timer
#   end a read of a server that never answers after 1 s (0.5 s) with
#   EINTR, under read_timeout 2s; they used to end only at 2 s, with
#   ETIMEDOUT.  With SA_RESTART the read goes on to ETIMEDOUT at 2 s.
# - the program's own SO_RCVTIMEO 500 ms: EAGAIN at 500 ms, not
#   ETIMEDOUT at 2 s (SPEC 6: the program's shorter timeout wins).
# - a 503 with Retry-After: 2 is retried hidden from the program; its
#   timer at 500 ms interrupts the library's sleep (EINTR), and its next
#   read gets the retried answer, 200.
# - the same Retry-After begun by a poll on a non-blocking socket, then
#   a blocking read (O_NONBLOCK cleared) with SO_RCVTIMEO 500 ms: EAGAIN
#   at 500 ms, not the 200 after the 2 s sleep.
# - python3 against a server that resets the connection after reading
#   the request: recv raises ConnectionResetError, blocking or after
#   select; the library's peek at the response took the socket's error
#   from the kernel, and the program used to read an end of file.
# - the same error taken first by a write or by getsockopt(SO_ERROR)
#   after select: each gets it once, as bare (a write used to get EPIPE,
#   SO_ERROR 0, and the read after them the reset).  A dup of the
#   socket before the read or write changes nothing (they used to get an
#   end of file and EPIPE: the engine stops following a connection of
#   two descriptors, and its held error was not asked any more).
#
# About 9 s in all.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${RS_BUILD:-$PWD/build}
LIB=${RS_LIB:-$B/libresolute.so}
PEER=$B/itests/peer
SLACK=$((700 + ${RS_SLACK_MS:-0}))
# shellcheck source=tests/programs/lib.sh
. tests/programs/lib.sh
[ -x "$PEER" ] || { echo "SKIPPED: $PEER not built (make tests)"; exit 0; }
fails=0
tmp=$(mktemp -d /tmp/rs-hown-XXXXXX)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

if ! ${CC:-cc} -O2 -D_FORTIFY_SOURCE=2 -o "$tmp/client" \
    tests/programs/own_timeo_client.c; then
	echo "FAIL  own_timeo_client.c does not build"
	exit 1
fi
cat >"$tmp/policy.yaml" <<'YAML'
version: 1
hosts:
  - match: 127.0.0.1
    read_timeout: 2s
    http:
      retry_on_status: [503]
      attempts: 2
YAML

# wait_port FILE: the port a server wrote into FILE.
wait_port() {
	i=0
	while ! grep -q '^[0-9][0-9]*$' "$1" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	cat "$1"
}

"$PEER" silent -l 30000 >"$tmp/silent.port" &
pids="$pids $!"
silent=$(wait_port "$tmp/silent.port")
python3 tests/programs/http_server.py --port-file "$tmp/http.port" \
	--lifetime 30 2>/dev/null &
pids="$pids $!"
http=$(wait_port "$tmp/http.port")
# Reads a request, then closes with SO_LINGER 0: a reset, once per
# connection, for 30 s at most.
python3 -c 'import socket, struct, sys, time
l = socket.create_server(("127.0.0.1", 0))
open(sys.argv[1], "w").write("%d\n" % l.getsockname()[1])
l.settimeout(30)
end = time.monotonic() + 30
while time.monotonic() < end:
    c, _ = l.accept()
    c.recv(4096)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()' "$tmp/reset.port" &
pids="$pids $!"
reset=$(wait_port "$tmp/reset.port")
[ -n "$silent" ] && [ -n "$http" ] && [ -n "$reset" ] ||
	{ echo "FAIL  a server did not start"; exit 1; }

under() {
	timeout 20 env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$tmp/policy.yaml" \
		"$@" >"$tmp/out" 2>&1
}
show() { sed 's/^/    | /' "$tmp/out" | tail -6; }

# check NAME WANT LOW: the client's first read line must be
# "read WANT MS" with MS in [LOW, LOW + SLACK).
check() {
	got=$(grep -m1 '^read' "$tmp/out")
	ms=$(echo "$got" | cut -d' ' -f3)
	if [ "$(echo "$got" | cut -d' ' -f2)" = "$2" ] &&
	    [ "${ms:-0}" -ge "$3" ] && [ "${ms:-0}" -lt $(($3 + SLACK)) ]; then
		ok "$1: $got"
	else
		fail "$1: ${got:-no read} (want $2 in [$3, $(($3 + SLACK))) ms)"
		show
	fi
}

under "$tmp/client" "$silent" 0 500 plain /
check "timer at 500 ms, no SA_RESTART" EINTR 500
under "$tmp/client" "$silent" 0 500 restart /
check "timer at 500 ms, SA_RESTART: read_timeout 2s" ETIMEDOUT 2000
under "$tmp/client" "$silent" 500 0 plain /
check "own SO_RCVTIMEO 500 ms" EAGAIN 500
under "$tmp/client" "$silent" 500 700 restart /
check "own SO_RCVTIMEO 500 ms, SA_RESTART timer at 700 ms" EAGAIN 500

# The hidden Retry-After sleep: EINTR at 500 ms, then the retried 200.
under "$tmp/client" "$http" 0 500 plain "/t/ra$$/503/1/2/ka/cl" again
check "timer at 500 ms in a Retry-After: 2 sleep" EINTR 500
if grep -q '^status 200' "$tmp/out"; then
	ok "the read after EINTR gets the retried response: 200"
else
	fail "the read after EINTR: $(tr '\n' ' ' <"$tmp/out") (want status 200)"
fi

# A retry that a non-blocking step began (the program's poll saw nothing
# of the 503 and its Retry-After: 2), finished by a blocking read once
# O_NONBLOCK is cleared: the program's own SO_RCVTIMEO 500 ms ends that
# read with EAGAIN, as the kernel's would, not after the 2 s sleep; its
# later reads get the retried answer, 200.
under "$tmp/client" "$http" 500 0 nbpoll "/t/nb$$/503/1/2/ka/cl" again
check "own SO_RCVTIMEO 500 ms, a retry begun by poll" EAGAIN 500
if grep -q '^status 200' "$tmp/out"; then
	ok "a later read gets the retried response: 200"
else
	fail "the reads after EAGAIN: $(tr '\n' ' ' <"$tmp/out") (want status 200)"
fi

# perl: alarm 1 and die, as old scripts time their reads.
start=$(now_ms)
under perl -e 'use Socket;
socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
connect($s, sockaddr_in($ARGV[0], inet_aton("127.0.0.1"))) or die "connect: $!";
syswrite($s, "GET / HTTP/1.1\r\nHost: t\r\n\r\n");
eval { local $SIG{ALRM} = sub { die "alarm\n" }; alarm 1;
	sysread($s, my $b, 100); alarm 0; print "read: $!\n"; };
print "died: $@";' "$silent"
ms=$(($(now_ms) - start))
if grep -q '^died: alarm' "$tmp/out" && [ $ms -ge 1000 ] &&
    [ $ms -lt $((1000 + SLACK + 300)) ]; then
	ok "perl alarm 1 during sysread: died after $ms ms"
else
	fail "perl alarm 1 during sysread: $ms ms (want 'died: alarm' in [1000, $((1300 + SLACK))) ms)"
	show
fi

# python3: the reset reaches the program, blocking or after select.
for how in blocking select; do
	under python3 -c 'import select, socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
if sys.argv[2] == "select":
    s.setblocking(False)
    select.select([s], [], [], 5)
else:
    time.sleep(0.2)
try:
    print("recv", s.recv(100))
except OSError as e:
    print("error", type(e).__name__)' "$reset" "$how"
	if grep -q '^error ConnectionResetError' "$tmp/out"; then
		ok "python3 recv ($how) of a reset connection: ConnectionResetError"
	else
		fail "python3 recv ($how) of a reset connection: $(tr '\n' ' ' <"$tmp/out") (want ConnectionResetError)"
	fi
done

# The same error after select, taken first by a write or by SO_ERROR:
# Linux reports it once, to whichever comes first, and then the socket
# says EPIPE (a write) or an end of file (a read).  The library's held
# error must go the same way: bare and under it, the same lines.
# A dup (the engine stops following a connection of two descriptors)
# changes nothing: the held error still goes to the first call.
for ops in send,recv so_error,recv so_error,send recv,send dup,recv \
    dup,send; do
	cat >"$tmp/held.py" <<'PY'
import os, select, socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
s.setblocking(False)
select.select([s], [], [], 5)
for op in sys.argv[2].split(","):
    try:
        if op == "dup":
            print(op, os.dup(s.fileno()) > 0)
        elif op == "send":
            print(op, s.send(b"x"))
        elif op == "recv":
            print(op, s.recv(100))
        else:
            print(op, s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR))
    except OSError as e:
        print(op, type(e).__name__)
PY
	timeout 20 python3 "$tmp/held.py" "$reset" "$ops" >"$tmp/bare" 2>&1
	under python3 "$tmp/held.py" "$reset" "$ops"
	if cmp -s "$tmp/bare" "$tmp/out" && [ -s "$tmp/bare" ]; then
		ok "python3 $ops after select on a reset: as bare ($(tr '\n' ' ' <"$tmp/out"))"
	else
		fail "python3 $ops after select on a reset: $(tr '\n' ' ' <"$tmp/out") (bare: $(tr '\n' ' ' <"$tmp/bare"))"
	fi
done

[ $fails -eq 0 ] || exit 1
