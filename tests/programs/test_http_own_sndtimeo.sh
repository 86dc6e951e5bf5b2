#!/bin/sh
# SPDX-License-Identifier: MIT
# test_http_own_sndtimeo.sh - a request head the library holds and sends
# itself must leave within the program's own SO_SNDTIMEO, as the kernel's
# blocking send would, and the stream must stay whole.
#
# python3 sets SO_SNDBUF 4096 and SO_SNDTIMEO 500 ms, and sends a 15 KB
# request head to a server whose receive buffer is small and which reads
# nothing for 1.5 s: bare, the send returns part of it after 500 ms.  The
# client then sends the rest, retrying on EAGAIN, and the server checks
# what it got.  Two rules hold the head:
# - http: with idempotency_key: inject (the retry engine, httpretry.c):
#   its flush used to wait for room without end (write_timeout off);
# - deadline_header (httpout.c, with a deadline, so the head is edited):
#   each try used to get the whole 500 ms anew, and the call failed with
#   EAGAIN after 1 s although bytes had gone.
# Each send must end in [500 - tick, 500 + slack) ms, and the server must
# get the program's bytes whole (with the library's header line, if it
# went).  The tick: where the kernel times the program's SO_SNDTIMEO (bare,
# and sends the library passes through), it counts whole ticks from the
# current one, which is partly gone, so its send may end up to a tick
# before 500 ms (CI saw a bare one at 498); 10 ms is a tick at HZ=100, the
# coarsest Linux has.  The library's own waits round up and are never
# early; the bugs this holds (EAGAIN after 1 s, a wait without end) are
# far outside the window either way.
#
# - a GET that is all head, then shutdown(SHUT_WR): known broken, below.
#
# About 9 s in all.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${RS_BUILD:-$PWD/build}
LIB=${RS_LIB:-$B/libresolute.so}
SLACK=$((400 + ${RS_SLACK_MS:-0}))
TICK=10
# shellcheck source=tests/programs/lib.sh
. tests/programs/lib.sh
fails=0
tmp=$(mktemp -d /tmp/rs-hsnd-XXXXXX)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

# One connection per run: reads nothing for 1.5 s, then everything until
# the client's end, and writes "ok" or what differs to the report file.
cat >"$tmp/server.py" <<'PY'
import re, socket, sys, time
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
l.bind(("127.0.0.1", 0))
l.listen(4)
open(sys.argv[1], "w").write("%d\n" % l.getsockname()[1])
l.settimeout(30)
want = (b"POST /p HTTP/1.1\r\nHost: t\r\nX-Big: " + b"a" * 15000 +
    b"\r\nContent-Length: 2\r\n\r\nhi")
want_get = b"GET /g HTTP/1.1\r\nHost: t\r\nX-Big: " + b"a" * 15000 + b"\r\n\r\n"
end = time.monotonic() + 30
n = 0
while time.monotonic() < end:
    try:
        c, _ = l.accept()
    except OSError:
        break
    time.sleep(1.5)
    c.settimeout(5)
    got = b""
    try:
        while True:
            b = c.recv(65536)
            if not b:
                break
            got += b
    except OSError:
        pass
    c.close()
    seen = re.sub(rb"(Idempotency-Key|X-Deadline): [^\r]*\r\n", b"", got)
    n += 1
    with open("%s.%d" % (sys.argv[2], n), "w") as f:
        f.write("ok\n" if seen in (want, want_get) else
            "got %d bytes, want %d or %d\n" % (len(seen), len(want),
                len(want_get)))
PY
cat >"$tmp/client.py" <<'PY'
import os, socket, struct, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO,
    struct.pack("ll", 0, 500000))
data = (b"POST /p HTTP/1.1\r\nHost: t\r\nX-Big: " + b"a" * 15000 +
    b"\r\nContent-Length: 2\r\n\r\nhi")
if os.environ.get("RS_T_GET"):
    data = b"GET /g HTTP/1.1\r\nHost: t\r\nX-Big: " + b"a" * 15000 + b"\r\n\r\n"
sent = 0
for i in range(20):
    if sent == len(data):
        break
    t0 = time.monotonic()
    try:
        n = s.send(data[sent:])
        sent += n
        print("send", n, int((time.monotonic() - t0) * 1000))
    except BlockingIOError:
        print("send EAGAIN", int((time.monotonic() - t0) * 1000))
print("sent", sent, "of", len(data))
s.shutdown(socket.SHUT_WR)
time.sleep(0.1)
PY
cat >"$tmp/inject.yaml" <<'YAML'
version: 1
hosts:
  - match: 127.0.0.1
    http:
      retry_on_status: [503]
      idempotency_key: inject
YAML
cat >"$tmp/header.yaml" <<'YAML'
version: 1
hosts:
  - match: 127.0.0.1
    deadline_header: X-Deadline
YAML

python3 "$tmp/server.py" "$tmp/port" "$tmp/report" &
pids="$pids $!"
i=0
while ! grep -q '^[0-9][0-9]*$' "$tmp/port" 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
port=$(cat "$tmp/port" 2>/dev/null)
[ -n "$port" ] || { echo "FAIL  the server did not start"; exit 1; }

# run N NAME [env ...]: the client's N-th connection; checks its sends
# (their times too, unless timed=0) and the server's report.
timed=1
run() {
	n=$1 name=$2
	shift 2
	timeout 10 env "$@" python3 "$tmp/client.py" "$port" >"$tmp/out" 2>&1
	j=0
	while [ ! -s "$tmp/report.$n" ] && [ $j -lt 100 ]; do
		sleep 0.1
		j=$((j + 1))
	done
	# The first send and each EAGAIN end at 500 ms (less a tick, above);
	# a later send that moved bytes may end sooner, never later.
	late=$(awk '$1 == "send" && ($3 >= 500 + s ||
	    ($3 < 500 - t && (NR == 1 || $2 == "EAGAIN"))) { print }' \
	    s="$SLACK" t="$TICK" "$tmp/out")
	[ "$timed" = 1 ] || late=""
	first=$(head -1 "$tmp/out")
	case $first in
	"send "[0-9]*) ;;
	*) late="$late first: $first" ;;
	esac
	if [ -z "$late" ] && grep -q "^sent \([0-9]*\) of \1\$" "$tmp/out" &&
	    grep -q '^ok' "$tmp/report.$n" 2>/dev/null; then
		ok "$name: $(tr '\n' ' ' <"$tmp/out")"
	else
		fail "$name: $(tr '\n' ' ' <"$tmp/out") (server: $(cat "$tmp/report.$n" 2>/dev/null))"
	fi
}

run 1 "bare"
run 2 "idempotency_key: inject" LD_PRELOAD="$LIB" \
	RESOLUTE_POLICY="$tmp/inject.yaml"
run 3 "deadline_header, with a deadline" LD_PRELOAD="$LIB" \
	RESOLUTE_POLICY="$tmp/header.yaml" \
	RESOLUTE_DEADLINE=$(($(date +%s) * 1000 + 60000))
# A GET with no body: the one send is all head, held and flushed by the
# library, which says all of it went; the program then shuts its side
# down.  The server must still get the whole head, as bare.
run 4 "GET, bare" RS_T_GET=1
# A call whose bytes are all in the head is told all of them went: they
# must be on the wire when it returns, or the shutdown (not interposed)
# loses the rest (the server got 8192 bytes of 15037 when the program's
# SO_SNDTIMEO cut that flush).  So that send goes whole, as long as the
# server takes (1.5 s), past the program's 500 ms: untimed (documented).
timed=0
run 5 "GET, idempotency_key: inject, then shutdown" RS_T_GET=1 \
	LD_PRELOAD="$LIB" RESOLUTE_POLICY="$tmp/inject.yaml"
timed=1

[ $fails -eq 0 ] || exit 1
