#!/bin/sh
# SPDX-License-Identifier: MIT
# shellcheck disable=SC2154 # tmp, base, rc, ms and the counts: https_setup.sh
# test_https_retry.sh - HTTP/1.x status retries over TLS (SPEC 9, "Over
# TLS") with real clients against tests/programs/https_server.py (the
# plaintext test server behind python's ssl, with a throw-away CA and
# certificates made here by the openssl CLI).
#
# Each client GETs a resource that answers 503 with Retry-After: 1 twice,
# then 200: bare it fails on the first 503; under a policy with `http:`,
# the clients whose TLS library the library follows (OpenSSL through
# SSL_set_fd or a BIO of their own: curl, python's urllib and http.client,
# PHP; GnuTLS: wget; memory BIOs the program pumps: asyncio, Debian's
# node 18) get the 200 after three requests at least 1 s apart; those out
# of reach (nodesource's node, OpenSSL linked in) must come out as bare.
# wget on a 503 that closes the connection gets it at once (a GnuTLS
# session is not made anew).
# Then with curl: a new connection and handshake per retry, a keyless POST
# sent once, an injected key the same on every try, 404 and a capped
# Retry-After handed over at once, a download byte-identical; and
# certificates: an unknown CA and a wrong name fail as bare, and a replay
# whose new handshake meets another certificate hands the 503 over as it
# came (curl, python); a kept-alive 503 whose connection the server
# resets, on the resend or during the wait: a new connection and
# handshake (curl), and on one showing another certificate the 503 that
# was held handed over whole; responses split at random points into many TLS
# records.  The non-blocking engine: curl -Z and an epoll loop of
# python's (https_eloop.py) retry their transfers side by side, and a
# download beside a retry's wait is not held up by it.  Missing clients
# are SKIPPED cases.
set -u
# shellcheck source=tests/programs/https_setup.sh
. "$(dirname "$0")/https_setup.sh"

# client NAME retries|passes|hands PROGRAM [ka|close]: 503 x2 with
# Retry-After: 1 (kept alive, or closing the connection), then 200.
client() {
	name=$1 want=$2 id=$(echo "$1" | tr : -)-$$ conn=${4:-ka}
	command -v "$3" >/dev/null 2>&1 || { skip "$name: $3 not installed"; return; }
	usable "$3" --version >/dev/null ||
		{ skip "$name: $3 does not start with the sanitizer runtime preloaded (bare as well)"; return; }
	bare sh "$GETS" "${name%%:*}" "$base/t/bare-$id/503/2/1/$conn/cl"
	b_rc=$rc b_ms=$ms b_n=$(stat "bare-$id" count)
	run "$tmp/policy.yaml" sh "$GETS" "${name%%:*}" "$base/t/lib-$id/503/2/1/$conn/cl"
	n=$(stat "lib-$id" count) span=$(stat "lib-$id" span_ms)
	line="$name: bare exit $b_rc, $b_n request(s), $b_ms ms; library exit $rc, $n request(s), $ms ms (span $span ms)"
	if [ "$want" = retries ] && [ "$b_rc" -ne 0 ] && [ "$b_n" = 1 ] &&
	    [ $rc -eq 0 ] && [ "$n" = 3 ] && grep -q "^ok lib-$id 3" "$tmp/out" &&
	    [ "$span" -ge 2000 ] && [ "$span" -lt $((2000 + SLACK)) ]; then
		ok "$line"
	elif [ "$want" = passes ] && [ "$b_rc" -ne 0 ] && [ "$b_n" = 1 ] &&
	    [ $rc -ne 0 ] && [ "$n" = 1 ]; then
		ok "$line: out of reach, passed through as bare"
	elif [ "$want" = hands ] && [ "$b_rc" -ne 0 ] && [ "$b_n" = 1 ] &&
	    [ $rc -ne 0 ] && [ "$n" = 1 ] && [ "$ms" -lt "$SLACK" ] &&
	    grep -q -E "handed over|giving up" "$tmp/out"; then
		ok "$line: handed over at once, as it came"
	else
		bad "$line (want: $want)"
	fi
}

client curl retries curl
client urllib retries python3
# With a timeout python's socket is non-blocking: OpenSSL's WANT_READ, its
# own poll, and the retry stepped in that poll and its reads.
client urllib_timeout retries python3
client httpclient retries python3
client php retries php
client wget retries wget
# asyncio pumps its TLS through memory BIOs (ssl.MemoryBIO): followed by
# the ClientHello it writes, replayed on the kept connection.
client asyncio retries python3
client "asyncio:close" hands python3 close
# A memory BIO's kept connection reset by the server, during the wait
# (the resend finds it gone) or right after reading the resend (the
# program reads the reset itself): the 503 is handed over as it came, then
# the end of the stream, 1 s on (before: asyncio saw an empty stream, the
# library's unsent records going into the dead socket at its next read;
# and a ConnectionResetError, node's fetch "fetch failed", at a reset
# after the resend, which such a program drops the connection at without
# reading its session).
pumped_reset() {
	name=$1 mode=$2 want_n=$3 id=$(echo "$1$2" | tr -c 'a-z0-9\n' -)$$
	usable "$4" --version >/dev/null || return
	run "$tmp/policy.yaml" sh "$GETS" "$name" "$base/files/$id/2/1/$mode/hello.txt"
	n=$(stat "$id" count)
	when="during the wait"
	[ "$mode" = rst ] && when="after reading the resend"
	line="$name, 503 kept alive, the connection reset $when: exit $rc, $n request(s), $ms ms"
	if [ $rc -eq 1 ] && [ "$n" = "$want_n" ] && grep -q "^busy" "$tmp/out" &&
	    grep -q "handed over" "$tmp/out" && [ $ms -ge 1000 ] &&
	    [ $ms -lt $((1000 + SLACK)) ]; then
		ok "$line: the 503 handed over as it came"
	else
		bad "$line (want exit 1, the 503 handed over, $want_n request(s))"
	fi
}
echo "resolute $$" >"$tmp/files/hello.txt"
pumped_reset asyncio rstwait 1 python3
pumped_reset asyncio rst 2 python3
# The node on the PATH: nodesource's builds link OpenSSL statically, out of
# reach as Go is; Debian's links libssl 3, as node18.sh's does.
if ldd "$(command -v node 2>/dev/null || echo /nonexistent)" 2>/dev/null |
    grep -q libssl; then
	skip "node on the PATH links libssl: its cases are node18's below"
else
	client node passes node
	client nodefetch passes node
fi
# Debian's node 18 (its own memory BIO over the system's libssl): fetch
# (undici) and an agent with keepAlive are replayed on their connection;
# https.get's default agent asks `Connection: close`, and a new
# connection and handshake would be node's own: handed over at once.
NODE18=$(sh "$HERE/node18.sh") || NODE18=""
if [ -n "$NODE18" ]; then
	export RS_NODE="$NODE18"
	client node18_fetch retries "$RS_NODE"
	client node18_keepalive retries "$RS_NODE"
	client node18_close hands "$RS_NODE"
	# tls.connect writing its request on 'secureConnect': node runs
	# that inside the SSL_read that ends the handshake (its info
	# callback), so the request's SSL_write comes inside the read
	# (before: the engine was held by the read, the request went by
	# unseen and the 503s to the program; fetch did so 1 run in 5).
	client node18_tls retries "$RS_NODE"
	pumped_reset node18_fetch rstwait 1 "$RS_NODE"
	pumped_reset node18_fetch rst 2 "$RS_NODE"
	unset RS_NODE
else
	skip "node18: Debian's node 18 could not be fetched (see above)"
fi
client ruby retries ruby
if perl -MIO::Socket::SSL -MHTTP::Tiny -e 1 >/dev/null 2>&1; then
	client perl retries perl
else
	skip "perl: IO::Socket::SSL not installed (libio-socket-ssl-perl)"
fi
S=$$

# curl_case NAME PATH WANT_RC WANT_N LO_MS HI_MS [CURL ARGS...]
curl_case() {
	name=$1 path=$2 want_rc=$3 want_n=$4 lo=$5 hi=$6
	shift 6
	curl_ok "$name" || return
	run "$tmp/policy.yaml" curl -s -f --cacert "$CA" "$@" "$base$path"
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

curl_case "503, Connection: close: a new connection and handshake each time" \
	"/t/close-$S/503/2/1/close/cl" 0 3 2000 $((2000 + SLACK))
curl_case "429 without Retry-After, chunked: the backoff" \
	"/t/a429-$S/429/2/-/ka/chunked" 0 3 50 $((1000 + SLACK))
curl_case "404 is not retried" "/t/nf-$S/404/5/-/ka/cl" 22 1 0 $SLACK
curl_case "Retry-After: 120 above the cap: handed over at once" \
	"/t/cap-$S/503/5/120/ka/cl" 22 1 0 $SLACK
curl_case "a POST without a key is never sent twice" \
	"/t/post-$S/503/2/1/ka/cl" 22 1 0 $SLACK -d x=1
# A kept-alive 503 on a connection the server then resets, on the resend
# or during the wait: a new connection and handshake (OpenSSL's session
# is made anew), the file at last.
echo "resolute $S" >"$tmp/files/hello.txt"
curl_case "503 kept alive, reset on the resend: a new connection and handshake" \
	"/files/crst-$S/2/1/rst/hello.txt" 0 3 1000 $((1000 + SLACK))
curl_case "503 kept alive, reset during the wait: a new connection and handshake" \
	"/files/crstw-$S/2/1/rstwait/hello.txt" 0 3 2000 $((2000 + SLACK))

# The non-blocking engine over TLS: curl -Z drives its transfers from
# one poll loop, and the retries are stepped in it, not run inside one
# transfer's SSL_read (3 x 2 s one after the other before).  Three
# transfers, each 503, 503 (Retry-After: 1), 200: all three in about 2 s,
# on kept connections and on new ones (a handshake stepped per retry).
zcase() {
	name=$1 conn=$2
	curl_ok "$name" || return
	run "$tmp/policy.yaml" curl -s -f -Z --no-progress-meter --cacert "$CA" \
		"$base/t/z1$conn-$S/503/2/1/$conn/cl" "$base/t/z2$conn-$S/503/2/1/$conn/cl" \
		"$base/t/z3$conn-$S/503/2/1/$conn/cl"
	n=$(($(stat "z1$conn-$S" count) + $(stat "z2$conn-$S" count) + $(stat "z3$conn-$S" count)))
	got=$(grep -c "^ok z[123]$conn-$S 3" "$tmp/out")
	line="$name: exit $rc, $n requests, $got of 3 bodies, $ms ms"
	if [ $rc -eq 0 ] && [ "$n" = 9 ] && [ "$got" = 3 ] && [ $ms -ge 2000 ] &&
	    [ $ms -lt 4500 ]; then
		ok "$line"
	else
		bad "$line (want exit 0, 9 requests, 3 bodies, 2000..4500 ms)"
	fi
}
zcase "curl -Z, 3 transfers retried side by side, keep-alive" ka
zcase "curl -Z, 3 transfers retried side by side, a new connection each" close

# The loop is not stalled: while one transfer waits out Retry-After: 2,
# another (a 100 MiB download, some 0.2 s) runs to its end in the same
# curl -Z loop (bare: 2.2 s, stalled behind the retry inside SSL_read).
if curl_ok "curl -Z, a download during a retry's wait"; then
	run "$tmp/policy.yaml" curl -s -f -Z --no-progress-meter --cacert "$CA" \
		-w '%{url_effective} %{time_total}\n' \
		-o /dev/null "$base/t/zw-$S/503/1/2/ka/cl" -o /dev/null "$base/big/zb-$S/100"
	ta=$(grep "^$base/t/zw-$S/" "$tmp/out" | awk '{ printf "%d", $2 * 1000 }')
	tb=$(grep "^$base/big/zb-$S/" "$tmp/out" | awk '{ printf "%d", $2 * 1000 }')
	n=$(stat "zw-$S" count)
	line="curl -Z: the retried transfer $ta ms (2 requests: $n), the download beside it $tb ms"
	if [ $rc -eq 0 ] && [ "$n" = 2 ] && [ -n "$ta" ] && [ -n "$tb" ] &&
	    [ "$ta" -ge 2000 ] && [ "$tb" -lt 2000 ]; then
		ok "$line"
	else
		bad "$line (want exit 0 ($rc), the download done before the wait ends)"
	fi
fi

# The same in an event loop of python's own over epoll (ssl on
# non-blocking sockets: SSL_set_fd): two transfers retried side by side
# (a kept connection, a new one each time), a 100 MiB download and a
# response in records of 1 to 40 bytes beside them.  (Before: 4.3 s for
# the second retried one, the download 0.3 s only as it came first.)
run "$tmp/policy.yaml" python3 "$HERE/https_eloop.py" "$CA" \
	"$base/t/ek-$S/503/2/1/ka/cl" "$base/t/ec-$S/503/2/1/close/cl" \
	"$base/big/eb-$S/100" "$base/split/es-$S/$S/2"
tk=$(awk -v p="/t/ek-$S/503/2/1/ka/cl" '$1 == p && $2 == 200 { print $4 }' "$tmp/out")
tc=$(awk -v p="/t/ec-$S/503/2/1/close/cl" '$1 == p && $2 == 200 { print $4 }' "$tmp/out")
tb=$(awk -v p="/big/eb-$S/100" '$1 == p && $2 == 200 && $3 > 104857600 { print $4 }' "$tmp/out")
ts=$(awk -v p="/split/es-$S/$S/2" '$1 == p && $2 == 200 { print $4 }' "$tmp/out")
nk=$(stat "ek-$S" count) nc=$(stat "ec-$S" count)
line="python epoll loop over TLS: retried ${tk:-?} ms and ${tc:-?} ms ($nk and $nc requests), download ${tb:-?} ms, split ${ts:-?} ms"
hi=$((3000 + ${RS_SLACK_MS:-0}))
if [ $rc -eq 0 ] && [ "$nk" = 3 ] && [ "$nc" = 3 ] && [ -n "$tk" ] && [ -n "$tc" ] &&
    [ -n "$tb" ] && [ -n "$ts" ] && [ "$tk" -ge 2000 ] && [ "$tk" -lt $hi ] &&
    [ "$tc" -ge 2000 ] && [ "$tc" -lt $hi ] && [ "$tb" -lt 2000 ]; then
	ok "$line"
else
	bad "$line (want exit 0 ($rc), 3 requests each, the two in 2000..$hi ms, the download under 2000 ms)"
fi

# Zero-byte SSL_write_ex and SSL_read_ex succeed, as OpenSSL's own do
# (python's send(b"") raised SSLEOFError under the library: CPython's
# test_ssl test_read_write_zero).
zero='import socket, ssl, sys
c = ssl.create_default_context(cafile=sys.argv[2])
s = c.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[1]))),
                  server_hostname="127.0.0.1")
print(s.send(b""), s.recv(0), end=" ")
s.sendall(b"GET /t/zero-%s/404/0/-/ka/cl HTTP/1.1\r\nHost: x\r\n\r\n" % sys.argv[3].encode())
print(s.recv(12).decode())'
run "$tmp/policy.yaml" python3 -c "$zero" "$port" "$CA" "$S"
if [ $rc -eq 0 ] && grep -q "^0 b'' HTTP/1.1 200" "$tmp/out"; then
	ok "python send(b\"\") and recv(0) on a followed session: 0 and b'', as bare"
else
	bad "python send(b\"\") and recv(0) on a followed session: exit $rc"
fi

# GnuTLS: no new session for a replay, so a closing 503 is handed over at
# once, without a wait or a needless connection.
if command -v wget >/dev/null 2>&1; then
	run "$tmp/policy.yaml" sh "$GETS" wget "$base/t/wclose-$S/503/2/1/close/cl"
	n=$(stat "wclose-$S" count)
	if [ $rc -eq 8 ] && [ "$n" = 1 ] && [ $ms -lt $SLACK ] &&
	    grep -q "connects=1 " "$tmp/out"; then
		ok "wget, 503 with Connection: close: handed over at once (exit 8, 1 request, $ms ms)"
	else
		bad "wget, 503 with Connection: close: exit $rc, $n requests, $ms ms"
	fi
fi

# Record boundaries: responses (503, 503, then 200, chunked) written in
# pieces of 1 to 40 bytes, each its own TLS record, at points drawn from a
# seed per URL: the engine's read-ahead must judge, drain and hand over
# across them.  Many URLs per process: curl (its own BIO), urllib
# (SSL_set_fd), wget (GnuTLS).
split_case() {
	name=$1 k=$2
	shift 2
	urls=""
	for i in $(seq 1 "$k"); do
		urls="$urls $base/split/$name$i-$S/$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')/2"
	done
	# shellcheck disable=SC2086
	run "$tmp/policy.yaml" "$@" $urls
	got=$(grep -c "^split ${name}[0-9]*-$S 3$" "$tmp/out")
	if [ $rc -eq 0 ] && [ "$got" = "$k" ]; then
		ok "record boundaries, $name: $k responses split at random points, each after 2 retries"
	else
		bad "record boundaries, $name: exit $rc, $got of $k right"
	fi
}
curl_ok "record boundaries, curl" && split_case curl 20 curl -s -f --cacert "$CA"
curl_ok "record boundaries, curl -Z" && split_case curlz 20 curl -s -f -Z --no-progress-meter --cacert "$CA"
split_case urllib 20 python3 -c 'import ssl, sys, urllib.request
c = ssl.create_default_context(cafile=sys.argv[1])
for u in sys.argv[2:]:
    print(urllib.request.urlopen(u, context=c).read().decode(), end="")' "$CA"
command -v wget >/dev/null 2>&1 &&
    split_case wget 10 wget -q -O - --tries=1 --ca-certificate="$CA"

# POST under idempotency_key: inject: one key, a UUID v4, on every try.
# inject_case NAME PATH CMD...: CMD with $base$PATH appended, 503 twice.
inject_case() {
	name=$1 path=$2 id=$(echo "$2" | cut -d/ -f3)
	shift 2
	run "$tmp/inject.yaml" "$@" "$base$path"
	n=$(stat "$id" count) keys=$(stat "$id" keys) nokey=$(stat "$id" nokey)
	if [ $rc -eq 0 ] && [ "$n" = 3 ] && [ "$nokey" = 0 ] &&
	    echo "$keys" | grep -Eqx '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'; then
		ok "$name: exit 0, 3 requests, one key $keys"
	else
		bad "$name: exit $rc, $n requests, keys '$keys', $nokey without"
	fi
}
curl_ok "POST with inject over TLS" &&
    inject_case "POST with inject over TLS" "/t/inj-$S/503/2/1/ka/cl" \
	curl -s -f --cacert "$CA" -d x=1

# The same through asyncio's memory BIO: a keyless POST sent once; under
# inject, one key on all three tries (the head edited on its way into the
# session, the records left for asyncio to send, the resends' sent by the
# library).
run "$tmp/policy.yaml" sh "$GETS" asyncio_post "$base/t/apost-$S/503/2/1/ka/cl"
n=$(stat "apost-$S" count)
if [ $rc -ne 0 ] && [ "$n" = 1 ]; then
	ok "asyncio POST without a key: exit $rc, sent once"
else
	bad "asyncio POST without a key: exit $rc, $n requests (want 1)"
fi
inject_case "asyncio POST with inject" "/t/ainj-$S/503/2/1/ka/cl" \
	sh "$GETS" asyncio_post

# Certificates are never checked differently: an unknown CA and a wrong
# name fail as bare, with the same message.
same_failure() {
	name=$1
	shift
	bare "$@"
	b_rc=$rc
	b_msg=$(grep -v '^resolute' "$tmp/out" | head -1)
	run "$tmp/policy.yaml" "$@"
	msg=$(grep -v '^resolute' "$tmp/out" | head -1)
	if [ "$b_rc" -ne 0 ] && [ $rc -eq "$b_rc" ] && [ "$msg" = "$b_msg" ]; then
		ok "$name: exit $rc as bare ($msg)"
	else
		bad "$name: bare exit $b_rc ($b_msg), library exit $rc ($msg)"
	fi
}
curl_ok "curl, unknown CA" && same_failure "curl, unknown CA" curl -sS -f "$base/t/uca-$S/503/2/1/ka/cl"
arm 0
curl_ok "curl, wrong name" && same_failure "curl, wrong name" curl -sS -f --cacert "$CA" "$base_b/t/wn-$S/503/2/1/ka/cl"
arm 0
same_failure "python, wrong name" python3 -c 'import ssl, sys, urllib.request
c = ssl.create_default_context(cafile=sys.argv[2])
try:
    urllib.request.urlopen(sys.argv[1], context=c)
except Exception as e:
    print(type(e).__name__, str(e).split("(_ssl")[0]); sys.exit(1)' \
	"$base_b/t/wnp-$S/503/2/1/ka/cl" "$CA"

# A replay that needs a new connection meets another certificate: the 503
# goes to the program as it came, and the request is not sent there.
arm 1
curl_ok "curl, certificate swapped on the replay" &&
    run "$tmp/policy.yaml" curl -s -f --cacert "$CA" "$base_b/t/swap-$S/503/2/1/close/cl" &&
    n=$(stat "swap-$S" count)
if [ $CURL_OK = 0 ]; then
	:
elif [ $rc -eq 22 ] && [ "$n" = 1 ] && grep -q "handed over" "$tmp/out"; then
	ok "curl: a new handshake showing another certificate hands the 503 over (exit 22, 1 request)"
else
	bad "curl, certificate swapped on the replay: exit $rc, $n requests"
fi
# The same after a reset on the resend of a kept-alive 503: the 503 that
# was held is handed over whole (bare: exit 22 after 1 request).
arm 1
curl_ok "curl, reset on the resend, certificate swapped" &&
    run "$tmp/policy.yaml" curl -s -f -w '%{http_code}' --cacert "$CA" \
	"$base_b/files/rswap-$S/2/1/rst/hello.txt" &&
    n=$(stat "rswap-$S" count)
if [ $CURL_OK = 0 ]; then
	:
elif [ $rc -eq 22 ] && [ "$n" = 2 ] && grep -q "^503" "$tmp/out" &&
    grep -q "handed over" "$tmp/out"; then
	ok "curl: after a reset on the resend, a new handshake showing another certificate hands the 503 over (exit 22, 2 requests)"
else
	bad "curl, reset on the resend, certificate swapped: exit $rc, $n requests"
fi
arm 1
run "$tmp/policy.yaml" sh "$GETS" urllib "$base_b/t/swapp-$S/503/2/1/close/cl"
n=$(stat "swapp-$S" count)
if [ $rc -eq 1 ] && [ "$n" = 1 ] && grep -q "HTTP Error 503" "$tmp/out" &&
    grep -q "handed over" "$tmp/out"; then
	ok "python: a new handshake failing verification hands the 503 over (HTTPError 503, 1 request)"
else
	bad "python, certificate swapped on the replay: exit $rc, $n requests"
fi

# nginx with h2 and TLS in front of the server: curl offers h2 and
# http/1.1; under `alpn: http/1.1` it offers http/1.1 alone and retries,
# under `alpn: keep` it speaks h2, which passes through, said once.
if ! curl_ok "the nginx alpn cases"; then
	:
elif nginx_h2; then
	sed 's/retry_after_cap: 5s/retry_after_cap: 5s\n      alpn: keep/' \
		"$tmp/policy.yaml" >"$tmp/keep.yaml"
	ngu=https://127.0.0.1:$NG/t
	bare curl -s -f --cacert "$CA" -w '%{http_version}' "$ngu/ngb-$S/503/2/1/ka/cl"
	b_rc=$rc b_ver=$(tail -c 1 "$tmp/out")
	run "$tmp/policy.yaml" curl -s -f --cacert "$CA" -w ' %{http_version}' "$ngu/ng1-$S/503/2/1/ka/cl"
	n=$(stat "ng1-$S" count)
	if [ "$b_rc" = 22 ] && [ "$b_ver" = 2 ] && [ $rc -eq 0 ] && [ "$n" = 3 ] &&
	    grep -q "ok ng1-$S 3" "$tmp/out" && grep -q " 1\.1" "$tmp/out"; then
		ok "nginx h2 + http/1.1, alpn http/1.1: HTTP/1.1, exit 0, 3 requests, $ms ms (bare: h2, exit 22)"
	else
		bad "nginx, alpn http/1.1: bare exit $b_rc over $b_ver; library exit $rc, $n requests"
	fi
	# Two transfers on two connections (two names) in one process:
	# said once.
	run "$tmp/keep.yaml" curl -s -f --cacert "$CA" -w " %{http_version}" \
		"$ngu/ng2-$S/503/2/1/ka/cl" --next -4 -s -f --cacert "$CA" \
		"https://localhost:$NG/t/ng3-$S/503/2/1/ka/cl"
	n=$(stat "ng2-$S" count) n3=$(stat "ng3-$S" count)
	if [ $rc -eq 22 ] && [ "$n" = 1 ] && [ "$n3" = 1 ] &&
	    grep -q " 2" "$tmp/out" && grep -q "connects=2 " "$tmp/out" &&
	    [ "$(grep -c 'http retries off: h2 negotiated' "$tmp/out")" = 1 ]; then
		ok "nginx, alpn keep: h2 passes through (exit 22, 1 request each on 2 connections), said once"
	else
		bad "nginx, alpn keep: exit $rc, $n requests"
	fi
	kill "$ng_pid" 2>/dev/null
else
	skip "nginx not installed: the alpn cases"
fi

# Outbound deadlines (SPEC 10): under RESOLUTE_DEADLINE, a rule with
# deadline_header gives each request head the header on its way into the
# session (curl: its own BIO; python: SSL_set_fd), with `http` on every
# try of a retried request too.
printf 'version: 1\nhosts:\n  - match: 127.0.0.1\n    deadline_header: X-Request-Deadline\n' \
	>"$tmp/dh.yaml"
printf 'version: 1\nhosts:\n  - match: 127.0.0.1\n    deadline_header: X-Request-Deadline\n    http:\n      retry_on_status: [503]\n' \
	>"$tmp/dh2.yaml"
dl=$(($(now_ms) + 20000))
dh_case() {
	name=$1 pol=$2 path=$3 want=$4
	shift 4
	run "$pol" env RESOLUTE_DEADLINE=$dl "$@" "$base$path"
	got=$(stat "$(echo "$path" | cut -d/ -f3)" deadlines)
	if [ $rc -eq 0 ] && [ "$got" = "$want" ]; then
		ok "deadline header over TLS, $name: $got"
	else
		bad "deadline header over TLS, $name: exit $rc, server saw '$got' (want '$want')"
	fi
}
curl_ok "deadline header over TLS, curl" && dh_case curl "$tmp/dh.yaml" "/t/dhc-$S/200/0/-/ka/cl" "$dl" \
	curl -s -f --cacert "$CA"
dh_case urllib "$tmp/dh.yaml" "/t/dhu-$S/200/0/-/ka/cl" "$dl" \
	sh "$GETS" urllib
curl_ok "deadline header over TLS, curl, http too" && dh_case "curl, http too, 503 then 200" "$tmp/dh2.yaml" \
	"/t/dhr-$S/503/1/0/ka/cl" "$dl $dl" curl -s -f --cacert "$CA"
# Memory BIOs: the header goes into the session the ClientHello named
# (before: none; the tracker took the ClientHello for its request and
# gave the connection up).
dh_case asyncio "$tmp/dh.yaml" "/t/dha-$S/200/0/-/ka/cl" "$dl" sh "$GETS" asyncio
dh_case "asyncio, http too, 503 then 200" "$tmp/dh2.yaml" \
	"/t/dhar-$S/503/1/0/ka/cl" "$dl $dl" sh "$GETS" asyncio
if [ -n "$NODE18" ]; then
	dh_case "Debian's node 18 fetch" "$tmp/dh.yaml" "/t/dhn-$S/200/0/-/ka/cl" \
		"$dl" env RS_NODE="$NODE18" sh "$GETS" node18_fetch
	dh_case "Debian's node 18 fetch, http too, 503 then 200" "$tmp/dh2.yaml" \
		"/t/dhnr-$S/503/1/0/ka/cl" "$dl $dl" env RS_NODE="$NODE18" sh "$GETS" node18_fetch
fi

# Inbound deadlines (SPEC 10) for a server that reads its requests through
# OpenSSL: a request whose X-Request-Deadline has passed makes the
# server's next connect fail at once with ETIMEDOUT (110), where the same
# connect to a closed port is refused (111) before and after it.
cat >"$tmp/insrv.py" <<'PY'
import socket, ssl, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_GET(self):
        try:
            socket.create_connection(("127.0.0.1", 9), timeout=5).close()
            e = 0
        except OSError as x:
            e = x.errno
        b = ("errno %d\n" % e).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
c.load_cert_chain(sys.argv[1], sys.argv[2])
s = HTTPServer(("127.0.0.1", 0), H)
s.socket = c.wrap_socket(s.socket, server_side=True)
with open(sys.argv[3] + ".tmp", "w") as f:
    f.write(str(s.server_address[1]))
import os
os.rename(sys.argv[3] + ".tmp", sys.argv[3])
s.serve_forever()
PY
printf 'version: 1\ninbound_deadline: X-Request-Deadline\ndefaults:\n  attempts: 1\n' \
	>"$tmp/in.yaml"
LD_PRELOAD=$LIB RESOLUTE_POLICY=$tmp/in.yaml RESOLUTE_LOG=info \
	timeout 60 python3 "$tmp/insrv.py" "$tmp/good.pem" "$tmp/good.key" \
	"$tmp/inport" 2>"$tmp/in.log" &
in_pid=$!
i=0
while [ ! -s "$tmp/inport" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
inu=https://127.0.0.1:$(cat "$tmp/inport" 2>/dev/null)
got=$(curl -s --cacert "$CA" "$inu/a"; curl -s --cacert "$CA" \
	-H "X-Request-Deadline: 1000" "$inu/b"; curl -s --cacert "$CA" "$inu/c")
kill "$in_pid" 2>/dev/null
if [ "$(echo $got)" = "errno 111 errno 110 errno 111" ] &&
    grep -q "deadline passed" "$tmp/in.log"; then
	ok "inbound deadline read through SSL_read: the server's connect fails at once (110), before and after refused (111)"
else
	bad "inbound deadline over TLS: got '$(echo $got)'"
fi

# A download through an http rule, byte-identical.
MB=${RS_HTTPS_MB:-200}
curl_ok "$MB MB https download" && bare curl -s --cacert "$CA" -o "$tmp/bare.bin" "$base/big/dlb-$S/$MB"
[ $CURL_OK = 1 ] && run "$tmp/policy.yaml" curl -s --cacert "$CA" -o "$tmp/lib.bin" "$base/big/dl-$S/$MB"
if [ $CURL_OK = 0 ]; then
	:
elif [ $rc -eq 0 ] && cmp -s "$tmp/bare.bin" "$tmp/lib.bin" &&
    [ "$(wc -c <"$tmp/lib.bin")" -eq $((MB * 1048576)) ]; then
	ok "$MB MB https download byte-identical ($ms ms)"
else
	bad "$MB MB https download: exit $rc, $(wc -c <"$tmp/lib.bin") bytes"
fi
rm -f "$tmp/bare.bin" "$tmp/lib.bin"

echo "$passes passed, $fails failed, $skips skipped"
[ $fails -eq 0 ]
