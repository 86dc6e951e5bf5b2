#!/bin/sh
# SPDX-License-Identifier: MIT
# test_http_retry.sh - HTTP/1.x status retries (SPEC 9) with real clients
# against tests/programs/http_server.py on 127.0.0.1.
#
# Each client (curl, wget, python3 urllib / http.client / asyncio, node,
# Java HttpURLConnection, PHP) GETs a resource that answers 503 with
# Retry-After: 1 twice, then 200: without the library it fails after one
# request; under a policy with `http:` on, it gets the 200 after three
# requests, the second and third at least 1 s after the one before
# (asserted from the server's arrival times, so client start-up does not
# count).  Then, with curl and raw sockets: 429 with the backoff,
# Connection: close and until-close bodies (a reconnect), chunked bodies,
# 404 and 400 never retried, a Retry-After above the cap handed over at
# once, the process deadline and a spent retry budget handing the response
# over, a POST never sent twice, a POST replayed with one injected key,
# pipelining and Expect: 100-continue passed through, a 200 MB download
# byte-identical.  Then event loops on non-blocking sockets (an epoll
# client of ours, curl -Z, asyncio, node) keep running during the retries
# (see "Event loops" below).  Missing clients (java, php, node) are
# SKIPPED cases.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${RS_BUILD:-$PWD/build}
LIB=${RS_LIB:-$B/libresolute.so}
SLACK=$((2000 + ${RS_SLACK_MS:-0}))
GET=$PWD/tests/programs/http/get.sh
# shellcheck source=tests/programs/sanitizer.sh
. tests/programs/sanitizer.sh
tmp=$(mktemp -d /tmp/rs-http-XXXXXX)
server_pid=""
cleanup() {
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fails=0 passes=0 skips=0

cat >"$tmp/policy.yaml" <<'EOF'
version: 1
hosts:
  - match: 127.0.0.1
    backoff: { base: 100ms, cap: 1s }
    http:
      retry_on_status: [429, 503]
      attempts: 3
      retry_after_cap: 5s
EOF
sed 's/retry_after_cap: 5s/retry_after_cap: 5s\n      idempotency_key: inject/' \
	"$tmp/policy.yaml" >"$tmp/inject.yaml"

python3 tests/programs/http_server.py --port-file "$tmp/port" \
	--lifetime 600 2>"$tmp/server.log" &
server_pid=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
port=$(cat "$tmp/port" 2>/dev/null)
[ -n "$port" ] || { echo "http_server.py did not start"; exit 1; }
base=http://127.0.0.1:$port

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# stat ID FIELD: count, span_ms (first to last arrival), keys (distinct
# non-empty keys, space-separated), nokey (requests without a key).
stat() {
	python3 -c 'import json, sys, urllib.request
s = json.load(urllib.request.urlopen(sys.argv[1])); f = sys.argv[2]
t = s["times"]
if f == "count": print(s["count"])
elif f == "span_ms": print(int((t[-1] - t[0]) * 1000) if t else 0)
elif f == "keys": print(" ".join(sorted({k for k in s["keys"] if k})))
elif f == "nokey": print(sum(1 for k in s["keys"] if not k))' \
		"$base/_stats/$1" "$2"
}

ok() { echo "ok    $*"; passes=$((passes + 1)); }
bad() { echo "FAIL  $*"; fails=$((fails + 1)); sed 's/^/    | /' "$tmp/out" | tail -8; }

# run POLICY CMD...: CMD under the library, bounded; sets rc and ms.
run() {
	pol=$1
	shift
	start=$(now_ms)
	timeout 30 env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$pol" \
		RESOLUTE_LOG=info "$@" >"$tmp/out" 2>&1
	rc=$?
	ms=$(($(now_ms) - start))
}
bare() {
	start=$(now_ms)
	timeout 30 "$@" >"$tmp/out" 2>&1
	rc=$?
	ms=$(($(now_ms) - start))
}

# resolute explain shows the rule's HTTP settings.
CLI=${RS_CLI:-$B/resolute}
if [ -x "$CLI" ]; then
	"$CLI" explain --policy "$tmp/policy.yaml" 127.0.0.1:80 >"$tmp/out" 2>&1
	if grep -Eq '^  http.retry_on_status +429, 503 +\(rule\)' "$tmp/out" &&
	    grep -Eq '^  http.retry_after_cap +5s +\(rule\)' "$tmp/out" &&
	    grep -Eq '^  http.idempotency_key +off +\(defaults\)' "$tmp/out"; then
		ok "resolute explain shows the http settings and where they come from"
	else
		bad "resolute explain does not show the http settings"
	fi
fi

# client NAME: 503 x2 with Retry-After: 1, then 200.
client() {
	name=$1
	id=$name-$$
	bare sh "$GET" "$name" "$base/t/bare-$id/503/2/1/ka/cl"
	b_rc=$rc b_ms=$ms b_n=$(stat "bare-$id" count)
	run "$tmp/policy.yaml" sh "$GET" "$name" "$base/t/lib-$id/503/2/1/ka/cl"
	n=$(stat "lib-$id" count) span=$(stat "lib-$id" span_ms)
	line="$name: bare exit $b_rc, $b_n request(s), $b_ms ms; library exit $rc, $n requests, $ms ms (retries $span ms apart in all)"
	if [ "$b_rc" -ne 0 ] && [ "$b_n" = 1 ] && [ $rc -eq 0 ] && [ "$n" = 3 ] &&
	    grep -q "^ok lib-$id 3" "$tmp/out" && [ "$span" -ge 2000 ] &&
	    [ "$span" -lt $((2000 + SLACK)) ]; then
		ok "$line"
	else
		bad "$line"
	fi
}

for c in curl wget urllib httpclient asyncio node java php; do
	case $c in
	urllib | httpclient | asyncio) cmd=python3 ;;
	*) cmd=$c ;;
	esac
	if ! command -v "$cmd" >/dev/null 2>&1; then
		echo "skip  $c: $cmd not installed"
		skips=$((skips + 1))
		continue
	fi
	if ! usable "$cmd" --version; then
		skips=$((skips + 1))
		continue
	fi
	client "$c"
done

S=$$

# Event loops (non-blocking sockets): the retry runs in the program's
# waits, so the loop goes on serving everything else during the
# Retry-After wait, and the socket is reported readable only once the
# response the program sees is there.  Each scenario answers 503 with
# Retry-After: 1 twice, then 200.
# - loop_client (C, epoll), level-triggered, EPOLLET and EPOLLONESHOT, on
#   a keep-alive connection and on Connection: close (the reconnect goes
#   through the connect engine's non-blocking path): it gets the 200, the
#   server saw 3 requests 2 s apart; a ping-pong on a second connection of
#   the same loop keeps answering (no gap between answers above LAG ms,
#   where a stalled loop shows 1 s or more); a non-blocking read 250 ms
#   into the wait fails with EAGAIN at once.  Without the library: the 503.
# - curl's multi interface (poll): three such transfers in parallel take
#   2 s in all, not 6 s.
# - python3 asyncio and node: two such GETs at once; the loop's 10 ms
#   timer is never more than LAG ms late.
# About 20 s in all.
HERE=$PWD/tests/programs/http
# How late a loop may be: far below the 1000 ms a stalled one shows.
LAG=${RS_LAG_MS:-300}
sed 's/^    backoff:/    read_timeout: 10s\n    backoff:/' "$tmp/policy.yaml" \
	>"$tmp/loop.yaml"
lrun() { run "$tmp/loop.yaml" "$@"; }

# field NAME: the number after NAME in the client's result line.
field() { tr '\n' ' ' <"$tmp/out" | sed -n "s/.* $1 \([^ ]*\).*/\1/p"; }

# Retries 2 s apart in all, as Retry-After: 1 twice says.
spaced() { [ "$1" -ge 2000 ] && [ "$1" -lt $((2000 + SLACK)) ]; }

if ! ${CC:-cc} -O1 -o "$tmp/loop_client" "$HERE/loop_client.c"; then
	echo "FAIL  loop_client.c does not build"
	exit 1
fi
timeout 30 "$tmp/loop_client" "$port" "/t/bare-$S/503/2/1/ka/cl" et \
	>"$tmp/out" 2>&1
if grep -q '^status 503' "$tmp/out" && [ "$(stat "bare-$S" count)" = 1 ]; then
	ok "loop_client without the library: the 503, 1 request"
else
	bad "loop_client without the library"
fi
for conn in ka close; do
	for mode in lt et oneshot; do
		id=loop-$mode-$conn-$S
		lrun "$tmp/loop_client" "$port" "/t/$id/503/2/1/$conn/cl" $mode
		n=$(stat "$id" count) span=$(stat "$id" span_ms)
		gap=$(field max_gap_ms) pings=$(field pings)
		eag=$(field eagain) eag_ms=$(field eagain_ms)
		line="epoll $mode, $conn: exit $rc, $n requests ${span} ms apart, $pings pongs, longest gap $gap ms, read in the wait: EAGAIN $eag in $eag_ms ms"
		if [ $rc -eq 0 ] && grep -q "^status 200 body ok $id 3" \
		    "$tmp/out" && [ "$n" = 3 ] && spaced "$span" &&
		    [ "${gap:-9999}" -lt "$LAG" ] && [ "${pings:-0}" -ge 40 ] &&
		    [ "$eag" = yes ] && [ "${eag_ms:-9999}" -lt 50 ]; then
			ok "$line"
		else
			bad "$line"
		fi
	done
done

# curl_parallel: three retried transfers in one curl (multi, poll).
if usable curl --version; then
	a=za-$S b=zb-$S c=zc-$S
	lrun curl -s -f -Z --parallel-immediate -o /dev/null -o /dev/null \
		-o /dev/null -w '%{http_code}\n' "$base/t/$a/503/2/1/ka/cl" \
		"$base/t/$b/503/2/1/ka/cl" "$base/t/$c/503/2/1/close/cl"
	codes=$(grep -c '^200$' "$tmp/out")
	counts="$(stat "$a" count)$(stat "$b" count)$(stat "$c" count)"
	line="curl -Z, three retried transfers: exit $rc, $codes times 200, requests $counts, $ms ms"
	if [ $rc -eq 0 ] && [ "$codes" = 3 ] && [ "$counts" = 333 ] &&
	    spaced "$ms"; then
		ok "$line"
	else
		bad "$line"
	fi
else
	skips=$((skips + 1))
fi

# loop CLIENT: two retried GETs at once on one event loop.
loop() {
	name=$1
	shift
	a=$name-a-$S b=$name-b-$S
	lrun "$@" "$base/t/$a/503/2/1/ka/cl" "$base/t/$b/503/2/1/close/cl"
	lag=$(field max_lag_ms)
	line="$name, two retried GETs: exit $rc, requests $(stat "$a" count)+$(stat "$b" count), $ms ms, loop at most $lag ms late"
	if [ $rc -eq 0 ] && grep -q '^statuses 200,200' "$tmp/out" &&
	    [ "$(stat "$a" count)$(stat "$b" count)" = 33 ] &&
	    [ "${lag:-9999}" -lt "$LAG" ] && [ "$ms" -ge 2000 ] &&
	    [ "$ms" -lt $((2000 + SLACK)) ]; then
		ok "$line"
	else
		bad "$line"
	fi
}
loop asyncio python3 "$HERE/loop_asyncio.py"
if command -v node >/dev/null 2>&1 && usable node --version; then
	loop node node "$HERE/loop_node.js"
else
	echo "skip  node: not installed or not usable here"
	skips=$((skips + 1))
fi

# The rest uses curl (and python3 for raw sockets).
if ! usable curl --version; then
	echo "$passes passed, $fails failed, $((skips + 1)) skipped"
	[ $fails -eq 0 ]
	exit
fi

# curl_case NAME PATH WANT_RC WANT_COUNT MIN_MS MAX_MS [CURL ARGS]
curl_case() {
	name=$1 path=$2 want_rc=$3 want_n=$4 lo=$5 hi=$6
	shift 6
	run "$tmp/policy.yaml" curl -s -f "$@" "$base$path"
	id=$(echo "$path" | cut -d/ -f3)
	n=$(stat "$id" count)
	line="$name: exit $rc, $n request(s), $ms ms"
	if [ $rc -eq "$want_rc" ] && [ "$n" = "$want_n" ] && [ $ms -ge "$lo" ] &&
	    [ $ms -lt "$hi" ]; then
		ok "$line"
	else
		bad "$line (want exit $want_rc, $want_n requests, $lo..$hi ms)"
	fi
}

curl_case "429 without Retry-After, chunked: the backoff" \
	"/t/a429-$S/429/2/-/ka/chunked" 0 3 50 $((1000 + SLACK))
curl_case "503, Connection: close: a new connection each time" \
	"/t/close-$S/503/2/1/close/cl" 0 3 2000 $((2000 + SLACK))
curl_case "503 on keep-alive, then the server drops the connection" \
	"/t/drop-$S/503/2/1/drop/cl" 0 3 2000 $((2000 + SLACK))
curl_case "503 with a body until close" \
	"/t/eof-$S/503/1/1/close/eof" 0 2 1000 $((1000 + SLACK))
curl_case "404 is not retried" "/t/nf-$S/404/5/-/ka/cl" 22 1 0 $SLACK
curl_case "400 is not retried" "/t/br-$S/400/5/-/ka/cl" 22 1 0 $SLACK
curl_case "Retry-After: 120 above the cap: handed over at once" \
	"/t/cap-$S/503/5/120/ka/cl" 22 1 0 1000
curl_case "three 503s: the third goes to the program" \
	"/t/all-$S/503/9/1/ka/cl" 22 3 2000 $((2000 + SLACK))
curl_case "a POST without a key is never sent twice" \
	"/t/post-$S/503/2/1/ka/cl" 22 1 0 1000 -d x=1
curl_case "a POST with its own Idempotency-Key is retried" \
	"/t/pkey-$S/503/2/1/ka/cl" 0 3 2000 $((2000 + SLACK)) -d x=1 \
	-H "Idempotency-Key: k-$S"
curl_case "Expect: 100-continue passes through" \
	"/t/cont-$S/503/2/1/ka/cl" 22 1 0 $SLACK -d x=1 \
	-H "Expect: 100-continue"

# The process deadline: the second wait would end after it, so the second
# 503 goes to the program at once, a little after the first retry.
start=$(now_ms)
timeout 30 env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$tmp/policy.yaml" \
	RESOLUTE_DEADLINE=$((start + 1500)) curl -s -f \
	"$base/t/dl-$S/503/2/1/ka/cl" >"$tmp/out" 2>&1
rc=$?
ms=$(($(now_ms) - start))
n=$(stat "dl-$S" count)
if [ $rc -eq 22 ] && [ "$n" = 2 ] && [ $ms -ge 1000 ] &&
    [ $ms -lt $((1500 + SLACK)) ] && grep -q 'giving up (deadline)' "$tmp/out"; then
	ok "RESOLUTE_DEADLINE: exit 22, $n requests, $ms ms, gave up at the deadline"
else
	bad "RESOLUTE_DEADLINE: exit $rc, $n requests, $ms ms"
fi

# A spent retry budget hands the 503 over at once, counted as a budget
# denial (the exit summary, RESOLUTE_LOG=info).
cat >"$tmp/nobudget.yaml" <<'EOF2'
version: 1
hosts:
  - match: 127.0.0.1
    retry_budget: { ratio: 0, min_per_second: 0, scope: process }
    http: {}
EOF2
run "$tmp/nobudget.yaml" curl -s -f "$base/t/bud-$S/503/2/1/ka/cl"
n=$(stat "bud-$S" count)
if [ $rc -eq 22 ] && [ "$n" = 1 ] && [ $ms -lt 1000 ] &&
    grep -q 'giving up (budget_exhausted)' "$tmp/out" &&
    grep -q 'budget_denials=1 ' "$tmp/out"; then
	ok "retry budget spent: exit 22, $n request, $ms ms, one budget denial counted"
else
	bad "retry budget spent: exit $rc, $n requests, $ms ms"
fi

# POST under idempotency_key: inject: one key, a UUID v4, on every try.
run "$tmp/inject.yaml" curl -s -f -d x=1 "$base/t/inj-$S/503/2/1/ka/cl"
keys=$(stat "inj-$S" keys) nokey=$(stat "inj-$S" nokey) n=$(stat "inj-$S" count)
if [ $rc -eq 0 ] && [ "$n" = 3 ] && [ "$nokey" = 0 ] &&
    echo "$keys" | grep -Eq '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'; then
	ok "POST with inject: exit 0, 3 requests, one key $keys"
else
	bad "POST with inject: exit $rc, $n requests, keys '$keys', $nokey without"
fi

# Pipelining: two requests written at once; both responses reach the
# client as the server sent them (the first a 503), nothing retried.
run "$tmp/policy.yaml" python3 -c 'import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
r = "GET /t/pipe-%s/503/1/1/ka/cl HTTP/1.1\r\nHost: x\r\n\r\n" % sys.argv[2]
s.sendall((r + r).encode())
s.settimeout(10)
got = b""
while b"ok pipe" not in got:
    d = s.recv(65536)
    if not d:
        break
    got += d
print(got.decode())
sys.exit(0 if b" 503 " in got.split(b"\r\n")[0] and b"ok pipe" in got else 1)' "$port" "$S"
n=$(stat "pipe-$S" count)
if [ $rc -eq 0 ] && [ "$n" = 2 ]; then
	ok "pipelining passes through: 503 then 200 seen, $n requests"
else
	bad "pipelining: exit $rc, $n requests"
fi

# 200 MB through an http rule, byte-identical.
bare curl -s -o "$tmp/bare.bin" "$base/big/dlb-$S/200"
run "$tmp/policy.yaml" curl -s -o "$tmp/lib.bin" "$base/big/dl-$S/200"
if [ $rc -eq 0 ] && cmp -s "$tmp/bare.bin" "$tmp/lib.bin" &&
    [ "$(wc -c <"$tmp/lib.bin")" -eq 209715200 ]; then
	ok "200 MB download byte-identical ($ms ms)"
else
	bad "200 MB download: exit $rc, $(wc -c <"$tmp/lib.bin") bytes"
fi
rm -f "$tmp/bare.bin" "$tmp/lib.bin"

echo "$passes passed, $fails failed, $skips skipped"
[ $fails -eq 0 ]
