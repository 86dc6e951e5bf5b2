#!/bin/sh
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
# byte-identical.  Missing clients (java, php, node) are SKIPPED cases.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${RS_BUILD:-$PWD/build}
LIB=${RS_LIB:-$B/libresolute.so}
SLACK=${RS_SLACK_MS:-2000}
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
	curl -s "$base/_stats/$1" | python3 -c 'import json, sys
s = json.load(sys.stdin); f = sys.argv[1]; t = s["times"]
if f == "count": print(s["count"])
elif f == "span_ms": print(int((t[-1] - t[0]) * 1000) if t else 0)
elif f == "keys": print(" ".join(sorted({k for k in s["keys"] if k})))
elif f == "nokey": print(sum(1 for k in s["keys"] if not k))' "$2"
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

S=$$
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
