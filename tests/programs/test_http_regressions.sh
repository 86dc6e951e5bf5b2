#!/bin/sh
# SPDX-License-Identifier: MIT
# test_http_regressions.sh - real clients against the misbehaving server
# of tests/programs/http_regress_server.py, each case a bug the engine
# stand-in (tests/engine) found in the HTTP engines:
#
# - curl (non-blocking, poll): 503 with Connection: close, then every new
#   connection closed at once.  The retry must end with curl's "empty
#   reply" after one reconnect; it used to reconnect in a loop, hidden
#   from curl, until curl's own --max-time.
# - python3 http.client, one kept-alive connection: a 204 first, then a
#   503 that must be retried.  A body-less response used to make the next
#   response pass through, so the 503 reached the program.
# - python3 socket, blocking: a request, 700 ms of the program's own
#   work, then a read of a server that never answers, under read_timeout
#   1s: ETIMEDOUT 1 s after the request (SPEC 6: since the last
#   activity), not 1 s after the read.
# - a python3 ThreadingHTTPServer under inbound_deadline answers 204 to a
#   request whose deadline is 200 ms away, then connects to a backend
#   400 ms later in the same thread: the deadline ended with the 204 (a
#   response without a body), so the connect succeeds; it used to fail at
#   once with ETIMEDOUT, the request's deadline long past.
# - python3 socket, blocking and with a timeout (poll): the server sends
#   "HTTP/" and then resets or closes the connection.  The program gets
#   those 5 bytes and the reset (the end) at once, as bare; the head's
#   beginning used to be held for ever, the blocking engine spinning on
#   its peek, until read_timeout (ETIMEDOUT, the bytes lost) or, with
#   none, for ever (found by the soak, tests/soak).
#
# About 5 s in all.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${RS_BUILD:-$PWD/build}
LIB=${RS_LIB:-$B/libresolute.so}
SLACK=$((500 + ${RS_SLACK_MS:-0}))
# shellcheck source=tests/programs/lib.sh
. tests/programs/lib.sh
# shellcheck source=tests/programs/sanitizer.sh
. tests/programs/sanitizer.sh
fails=0
tmp=$(mktemp -d /tmp/rs-hreg-XXXXXX)
server_pid=""
cleanup() {
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

cat >"$tmp/policy.yaml" <<'YAML'
version: 1
hosts:
  - match: 127.0.0.1
    read_timeout: 1s
    backoff: { base: 100ms, jitter: none }
    http:
      retry_on_status: [503]
      attempts: 3
YAML

python3 tests/programs/http_regress_server.py --port-file "$tmp/port" \
	--lifetime 60 2>"$tmp/server.log" &
server_pid=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
port=$(cat "$tmp/port" 2>/dev/null)
[ -n "$port" ] || { echo "http_regress_server.py did not start"; exit 1; }

stat() {
	python3 -c 'import json, socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"GET /_stats/" + sys.argv[2].encode() + b" HTTP/1.1\r\n\r\n")
data = b""
while True:
    more = s.recv(4096)
    if not more:
        break
    data += more
print(json.loads(data.split(b"\r\n\r\n", 1)[1]).get(sys.argv[3], 0))' \
		"$port" "$1" "$2"
}

under() {
	timeout 20 env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$tmp/policy.yaml" \
		RESOLUTE_LOG=info "$@" >"$tmp/out" 2>&1
}

show() { sed 's/^/    | /' "$tmp/out" | tail -8; }

# 1. curl: one reconnect, then curl's own "empty reply" (exit 52).
if command -v curl >/dev/null 2>&1 && usable curl --version; then
	start=$(now_ms)
	under curl -s -o /dev/null --max-time 8 "http://127.0.0.1:$port/closing/c1"
	rc=$? ms=$(($(now_ms) - start)) n=$(stat c1 connections)
	line="curl, a new connection closed at once: exit $rc, $n connections, $ms ms"
	if [ $rc -eq 52 ] && [ "$n" = 2 ] && [ $ms -lt 3000 ]; then
		ok "$line"
	else
		fail "$line (want exit 52 after 2 connections)"
		show
	fi
else
	echo "skip  curl not usable"
fi

# 2. http.client: 204, then a 503 retried on the same connection.
under python3 -c 'import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
c.request("GET", "/bodyless/p2/a"); r = c.getresponse(); r.read()
print("first", r.status)
c.request("GET", "/bodyless/p2/b"); r = c.getresponse(); body = r.read()
print("second", r.status, body.decode())' "$port"
rc=$? n=$(stat p2 requests) c=$(stat p2 connections)
line="http.client, 204 then a 503 on one connection: exit $rc, $n requests on $c connection(s): $(tr '\n' ' ' <"$tmp/out" | cut -c1-120)"
if [ $rc -eq 0 ] && grep -q "^second 200 ok" "$tmp/out" && [ "$n" = 3 ] &&
    [ "$c" = 1 ]; then
	ok "$line"
else
	fail "$line"
	show
fi

# 3. A blocking read times out read_timeout after the request.
under python3 -c 'import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /silent/p3 HTTP/1.1\r\nHost: a\r\n\r\n")
t = time.monotonic()
time.sleep(0.7)
try:
    s.recv(100)
    print("read returned")
except OSError as e:
    print("error", e.errno, int((time.monotonic() - t) * 1000))' "$port"
r=$(grep -m1 '^error' "$tmp/out")
err=$(echo "$r" | cut -d' ' -f2) took=$(echo "$r" | cut -d' ' -f3)
line="blocking read 700 ms after its request, read_timeout 1s: ${r:-no error}"
if [ "$err" = 110 ] && [ "${took:-0}" -ge 1000 ] &&
    [ "${took:-0}" -lt $((1000 + SLACK)) ]; then
	ok "$line"
else
	fail "$line (want ETIMEDOUT (110) in [1000, $((1000 + SLACK))) ms)"
	show
fi

# 4. A 204 ends the serving thread's request deadline.
cat >"$tmp/inbound.yaml" <<'YAML'
version: 1
inbound_deadline: X-Request-Deadline
YAML
timeout 25 env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$tmp/inbound.yaml" \
	python3 tests/programs/deadline_bodyless.py "$tmp/port4" "$tmp/result4" \
	>"$tmp/out4" 2>&1 &
svc=$!
i=0
while [ ! -s "$tmp/port4" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
python3 -c 'import http.client, sys, time
c = http.client.HTTPConnection("127.0.0.1", int(open(sys.argv[1]).read()),
                               timeout=5)
c.request("GET", "/", headers={"X-Request-Deadline":
                                str(int(time.time() * 1000) + 200)})
print("status", c.getresponse().status)' "$tmp/port4" >"$tmp/out" 2>&1
i=0
while [ ! -s "$tmp/result4" ] && [ $i -lt 60 ]; do sleep 0.05; i=$((i + 1)); done
kill "$svc" 2>/dev/null
wait "$svc" 2>/dev/null
line="a connect 400 ms after a 204 whose request had 200 ms: $(cat "$tmp/result4" 2>/dev/null)"
if grep -q "^status 204" "$tmp/out" && grep -q "^connected" "$tmp/result4"; then
	ok "$line"
else
	fail "$line (want connected)"
	cat "$tmp/out4" >>"$tmp/out"
	show
fi

# 5. The beginning of a status line, then the server's end: shown at once.
cat >"$tmp/cut.yaml" <<'YAML'
version: 1
hosts:
  - match: 127.0.0.1
    http:
      retry_on_status: [503]
YAML
for end in rst fin; do
	for how in blocking poll; do
		timeout 10 env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$tmp/cut.yaml" \
		    python3 -c 'import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
if sys.argv[3] == "poll":
    s.settimeout(5)
s.sendall(b"GET /cut/c5/" + sys.argv[2].encode() + b" HTTP/1.1\r\nHost: a\r\n\r\n")
t, got = time.monotonic(), b""
try:
    while True:
        b = s.recv(100)
        if not b:
            print("end", got.decode(), int((time.monotonic() - t) * 1000))
            break
        got += b
except OSError as e:
    print("error", e.errno, got.decode(), int((time.monotonic() - t) * 1000))' \
		    "$port" "$end" "$how" >"$tmp/out" 2>&1
		rc=$?
		r=$(head -1 "$tmp/out")
		want="end HTTP/"
		[ $end = rst ] && want="error 104 HTTP/"
		line="\"HTTP/\" then a $end, $how read: exit $rc, ${r:-nothing}"
		ms=${r##* }
		case $r in
		"$want "*) [ "$ms" -lt $((300 + SLACK)) ] && ok "$line" ||
		    fail "$line (want it at once)" ;;
		*) fail "$line (want: $want, then the time)"; show ;;
		esac
	done
done

[ $fails -eq 0 ]
