#!/bin/sh
# test_http_wait.sh - HTTP/1.x status retries in event loops (SPEC 9): on a
# non-blocking socket the retry runs in the program's waits, so the loop
# goes on serving everything else during the Retry-After wait, and the
# socket is reported readable only once the response the program sees is
# there.  Against tests/programs/http_server.py on 127.0.0.1, each
# scenario answering 503 with Retry-After: 1 twice, then 200:
#
# - loop_client (C, epoll), level-triggered, EPOLLET and EPOLLONESHOT, on
#   a keep-alive connection and on Connection: close (the reconnect goes
#   through the connect engine's non-blocking path): it gets the 200, the
#   server saw 3 requests 2 s apart; a ping-pong on a second connection of
#   the same loop keeps answering (no gap between answers above 300 ms,
#   where a stalled loop shows 1 s or more); a non-blocking read 250 ms into
#   the wait fails with EAGAIN at once.  Without the library: the 503.
# - curl's multi interface (poll): three such transfers in parallel take
#   2 s in all, not 6 s.
# - python3 asyncio and node: two such GETs at once; the loop's 10 ms
#   timer is never more than 300 ms late.
# Bounded: about 25 s.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${RS_BUILD:-$PWD/build}
LIB=${RS_LIB:-$B/libresolute.so}
SLACK=${RS_SLACK_MS:-2000}
# How late a loop may be: far below the 1000 ms a stalled one shows.
LAG=${RS_LAG_MS:-300}
HERE=$PWD/tests/programs/http
# shellcheck source=tests/programs/sanitizer.sh
. tests/programs/sanitizer.sh
tmp=$(mktemp -d /tmp/rs-httpwait-XXXXXX)
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
    read_timeout: 10s
    backoff: { base: 100ms, cap: 1s }
    http:
      retry_on_status: [429, 503]
      attempts: 3
      retry_after_cap: 5s
EOF

python3 tests/programs/http_server.py --port-file "$tmp/port" \
	--lifetime 120 2>"$tmp/server.log" &
server_pid=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
port=$(cat "$tmp/port" 2>/dev/null)
[ -n "$port" ] || { echo "http_server.py did not start"; exit 1; }
base=http://127.0.0.1:$port

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# stat ID FIELD: count, or span_ms (first to last arrival).
stat() {
	python3 -c 'import json, sys, urllib.request
s = json.load(urllib.request.urlopen(sys.argv[1]))
t = s["times"]
print(s["count"] if sys.argv[2] == "count" else
      int((t[-1] - t[0]) * 1000) if t else 0)' "$base/_stats/$1" "$2"
}

ok() { echo "ok    $*"; passes=$((passes + 1)); }
bad() { echo "FAIL  $*"; fails=$((fails + 1)); sed 's/^/    | /' "$tmp/out" | tail -8; }

# run CMD...: CMD under the library, bounded; sets rc and ms.
run() {
	start=$(now_ms)
	timeout 30 env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$tmp/policy.yaml" \
		RESOLUTE_LOG=info "$@" >"$tmp/out" 2>&1
	rc=$?
	ms=$(($(now_ms) - start))
}

# field NAME: the number after NAME in the client's result line.
field() { tr '\n' ' ' <"$tmp/out" | sed -n "s/.* $1 \([^ ]*\).*/\1/p"; }

# Retries 2 s apart in all, as Retry-After: 1 twice says.
spaced() { [ "$1" -ge 2000 ] && [ "$1" -lt $((2000 + SLACK)) ]; }

S=$$
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
		run "$tmp/loop_client" "$port" "/t/$id/503/2/1/$conn/cl" $mode
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
	run curl -s -f -Z --parallel-immediate -o /dev/null -o /dev/null \
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
	run "$@" "$base/t/$a/503/2/1/ka/cl" "$base/t/$b/503/2/1/close/cl"
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

echo "$passes passed, $fails failed, $skips skipped"
[ $fails -eq 0 ]
