#!/bin/sh
# SPDX-License-Identifier: MIT
# shellcheck disable=SC2154 # tmp, base, rc, ms and the counts: https_setup.sh
# test_https_gnutls.sh - what the library does to request heads and ALPN
# offers over GnuTLS (SPEC 9 "Over TLS", 10), with programs that speak it
# against tests/programs/https_server.py (https_setup.sh):
#   wget: a rule's deadline_header on the head written with
#   gnutls_record_send, with and without `http`, on every try; a POST
#   under `idempotency_key: inject` sent three times with one key, and
#   once without inject;
#   gnutls-cli (gnutls-bin) against nginx offering h2 and http/1.1: an
#   offer of both becomes http/1.1 alone under `alpn: http/1.1` (its
#   request, HTTP/1.1 text, then answered and retried; bare, h2 is agreed
#   and the request never reaches the server), and is left alone under
#   `alpn: keep`; an offer of h2 alone passes through, said once;
#   lighttpd with mod_gnutls: a request whose deadline has passed makes
#   its connect onward fail at once (inbound deadlines).
# Missing clients are SKIPPED cases.
set -u
# shellcheck source=tests/programs/https_setup.sh
. "$(dirname "$0")/https_setup.sh"
S=$$

if ! command -v wget >/dev/null 2>&1; then
	skip "wget not installed: the request-head cases"
fi
WGET="wget -q -O - --tries=1 --ca-certificate=$CA"

# Outbound deadlines: the header on the head, on each try.
printf 'version: 1\nhosts:\n  - match: 127.0.0.1\n    deadline_header: X-Request-Deadline\n' \
	>"$tmp/dh.yaml"
printf 'version: 1\nhosts:\n  - match: 127.0.0.1\n    deadline_header: X-Request-Deadline\n    http:\n      retry_on_status: [503]\n' \
	>"$tmp/dh2.yaml"
dl=$(($(now_ms) + 20000))
dh_case() {
	name=$1 pol=$2 path=$3 want=$4
	# shellcheck disable=SC2086 # WGET is split into its words
	run "$pol" env RESOLUTE_DEADLINE=$dl $WGET "$base$path"
	got=$(stat "$(echo "$path" | cut -d/ -f3)" deadlines)
	if [ $rc -eq 0 ] && [ "$got" = "$want" ]; then
		ok "deadline header over GnuTLS, $name: $got"
	else
		bad "deadline header over GnuTLS, $name: exit $rc, server saw '$got' (want '$want')"
	fi
}
if command -v wget >/dev/null 2>&1; then
	dh_case wget "$tmp/dh.yaml" "/t/dhw-$S/200/0/-/ka/cl" "$dl"
	dh_case "wget, http too, 503 twice then 200" "$tmp/dh2.yaml" \
		"/t/dhwr-$S/503/2/0/ka/cl" "$dl $dl $dl"
	# Bare, the server sees no header: the case above could fail.
	# shellcheck disable=SC2086
	bare env RESOLUTE_DEADLINE=$dl $WGET "$base/t/dhwb-$S/200/0/-/ka/cl"
	got=$(stat "dhwb-$S" deadlines)
	if [ $rc -eq 0 ] && [ "$got" = "-" ]; then
		ok "deadline header over GnuTLS, bare: none ($got)"
	else
		bad "deadline header over GnuTLS, bare: exit $rc, server saw '$got'"
	fi
fi

# POST under inject: one key, a UUID v4, on every try; without inject
# the POST is sent once.
post_case() {
	name=$1 pol=$2 id=$3 want_rc=$4 want_n=$5
	# shellcheck disable=SC2086
	run "$pol" $WGET --post-data x=1 "$base/t/$id/503/2/1/ka/cl"
	n=$(stat "$id" count) keys=$(stat "$id" keys) nokey=$(stat "$id" nokey)
	line="$name: exit $rc, $n request(s), keys '$keys', $nokey without, $ms ms"
	if [ $rc -ne "$want_rc" ] || [ "$n" != "$want_n" ]; then
		bad "$line (want exit $want_rc, $want_n requests)"
	elif [ "$want_n" = 1 ] && [ "$nokey" = 1 ]; then
		ok "$line"
	elif [ "$nokey" = 0 ] && echo "$keys" |
	    grep -Eqx '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'; then
		ok "$line"
	else
		bad "$line (want one UUID v4 on every try)"
	fi
}
if command -v wget >/dev/null 2>&1; then
	post_case "wget POST with inject over GnuTLS" "$tmp/inject.yaml" \
		"winj-$S" 0 3
	post_case "wget POST without a key: sent once" "$tmp/policy.yaml" \
		"wpost-$S" 8 1
fi

# ALPN: gnutls-cli (its offer set with gnutls_alpn_set_protocols, the
# session tied with gnutls_transport_set_int) sends an HTTP/1.1 request
# from its standard input, held open 4 s so that the replies can come.
# cli_case NAME POLICY ID WANT_PROTO WANT_N ALPN...
cli_case() {
	name=$1 pol=$2 id=$3 want_p=$4 want_n=$5
	shift 5
	set -- "$@" --x509cafile="$CA" -p "$NG" 127.0.0.1
	if [ "$pol" = bare ]; then
		{ printf 'GET /t/%s/503/2/1/ka/cl HTTP/1.1\r\nHost: x\r\n\r\n' "$id"; sleep 4; } |
		    bare gnutls-cli "$@"
	else
		{ printf 'GET /t/%s/503/2/1/ka/cl HTTP/1.1\r\nHost: x\r\n\r\n' "$id"; sleep 4; } |
		    run "$pol" gnutls-cli "$@"
	fi
	proto=$(sed -n 's/^- Application protocol: //p' "$tmp/out")
	n=$(stat "$id" count)
	said=$(grep -c 'http retries off: h2 negotiated' "$tmp/out")
	span=$(stat "$id" span_ms)
	line="$name: $proto, $n request(s) ($span ms apart), 'h2 negotiated' said $said time(s)"
	if [ "$proto" != "$want_p" ] || [ "$n" != "$want_n" ]; then
		bad "$line (want $want_p, $want_n)"
	elif [ "$want_n" = 3 ] && { ! grep -q "^ok $id 3" "$tmp/out" ||
	    [ "$span" -lt 2000 ] || [ "$span" -ge $((2000 + SLACK)) ]; }; then
		bad "$line: no 200 after the retries 1 s apart"
	elif [ "$pol" != bare ] && [ "$want_p" = h2 ] && [ "$said" != 1 ]; then
		bad "$line (want it said once)"
	else
		ok "$line"
	fi
}
if ! command -v gnutls-cli >/dev/null 2>&1; then
	skip "gnutls-cli not installed (gnutls-bin): the alpn cases"
elif ! nginx_h2; then
	skip "nginx not installed: the alpn cases"
else
	sed 's/retry_after_cap: 5s/retry_after_cap: 5s\n      alpn: keep/' \
		"$tmp/policy.yaml" >"$tmp/keep.yaml"
	cli_case "gnutls-cli, h2 and http/1.1, bare" bare "gc1-$S" h2 0 \
		--alpn=h2 --alpn=http/1.1
	cli_case "gnutls-cli, h2 and http/1.1, alpn http/1.1" \
		"$tmp/policy.yaml" "gc2-$S" http/1.1 3 --alpn=h2 --alpn=http/1.1
	cli_case "gnutls-cli, h2 and http/1.1, alpn keep" "$tmp/keep.yaml" \
		"gc3-$S" h2 0 --alpn=h2 --alpn=http/1.1
	cli_case "gnutls-cli, h2 alone, alpn http/1.1" "$tmp/policy.yaml" \
		"gc4-$S" h2 0 --alpn=h2
fi

# Inbound deadlines (SPEC 10) for a server that reads its requests through
# GnuTLS: lighttpd with mod_gnutls (gnutls_transport_set_int2 on the
# accepted socket, gnutls_record_recv and _send) proxying to
# http_server.py over plain HTTP, python's urllib (HTTP/1.1) in front.  A request
# whose X-Request-Deadline has passed makes lighttpd's connect to the
# backend fail at once (its log: Connection timed out) and it answers 503,
# the backend never seeing it; before it and after it (once lighttpd takes
# the backend back, 1 to 2 s later) the backend answers.
LIGHTTPD=$(command -v lighttpd || echo /usr/sbin/lighttpd)
if [ ! -x "$LIGHTTPD" ] || [ ! -e /usr/lib/lighttpd/mod_gnutls.so ]; then
	skip "lighttpd or its mod_gnutls not installed (lighttpd, lighttpd-mod-gnutls): the inbound case"
else
	python3 "$HERE/http_server.py" --port-file "$tmp/pport" --lifetime 120 \
		2>/dev/null &
	pp_pid=$!
	i=0
	while [ ! -s "$tmp/pport" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	pport=$(cat "$tmp/pport")
	LT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	mkdir -p "$tmp/lt"
	cat >"$tmp/lt/lighttpd.conf" <<LTC
server.modules = ("mod_gnutls", "mod_proxy")
server.document-root = "$tmp/lt"
server.bind = "127.0.0.1"
server.port = $LT
server.errorlog = "$tmp/lt/error.log"
ssl.engine = "enable"
ssl.pemfile = "$tmp/good.pem"
ssl.privkey = "$tmp/good.key"
proxy.server = ("" => (("host" => "127.0.0.1", "port" => $pport)))
LTC
	printf 'version: 1\ninbound_deadline: X-Request-Deadline\ndefaults:\n  attempts: 1\n' \
		>"$tmp/in.yaml"
	LD_PRELOAD=$LIB RESOLUTE_POLICY=$tmp/in.yaml RESOLUTE_LOG=info \
		timeout 60 "$LIGHTTPD" -D -f "$tmp/lt/lighttpd.conf" 2>"$tmp/lt.log" &
	lt_pid=$!
	ltu=https://127.0.0.1:$LT/t/lt-$S/200/0/-/ka/cl
	# lt_get [HEADER]: the status of one GET (python's urllib speaks
	# HTTP/1.1 alone, and starts under the sanitizer runtime, curl not).
	lt_get() {
		python3 -c 'import ssl, sys, urllib.error, urllib.request
c = ssl.create_default_context(cafile=sys.argv[2])
r = urllib.request.Request(sys.argv[1])
if len(sys.argv) > 3: r.add_header(*sys.argv[3].split(": ", 1))
try: print(urllib.request.urlopen(r, context=c, timeout=10).status, end="")
except urllib.error.HTTPError as e: print(e.code, end="")
except Exception: print("-", end="")' "$ltu" "$CA" "$@"
	}
	i=0
	while [ "$(lt_get)" != 200 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	n0=$(python3 -c 'import json, sys, urllib.request
print(json.load(urllib.request.urlopen(sys.argv[1]))["count"])' "http://127.0.0.1:$pport/_stats/lt-$S")
	start=$(now_ms)
	mid=$(lt_get "X-Request-Deadline: 1000")
	mid_ms=$(($(now_ms) - start))
	i=0 after=""
	while [ "$after" != 200 ] && [ $i -lt 50 ]; do
		sleep 0.1
		after=$(lt_get)
		i=$((i + 1))
	done
	n=$(python3 -c 'import json, sys, urllib.request
print(json.load(urllib.request.urlopen(sys.argv[1]))["count"])' "http://127.0.0.1:$pport/_stats/lt-$S")
	kill "$lt_pid" "$pp_pid" 2>/dev/null
	wait "$lt_pid" 2>/dev/null
	line="lighttpd (GnuTLS): before 200 ($n0 at the backend), expired deadline $mid in $mid_ms ms, after $after; backend saw $n"
	if [ "$n0" -ge 1 ] && [ "$mid" = 503 ] && [ "$after" = 200 ] &&
	    [ "$n" = $((n0 + 1)) ] && [ $mid_ms -lt $SLACK ] &&
	    grep -q "deadline passed" "$tmp/lt.log" &&
	    grep -q "Connection timed out" "$tmp/lt/error.log"; then
		ok "$line"
	else
		cat "$tmp/lt.log" "$tmp/lt/error.log" >"$tmp/out"
		bad "$line"
	fi
fi

echo "$passes passed, $fails failed, $skips skipped"
[ $fails -eq 0 ]
