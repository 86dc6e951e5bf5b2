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
#   git's https helper (libcurl-gnutls: curl's own transport pointer, the
#   session learnt by its handshake): ls-remote and clone of a static
#   repository behind 503 (Retry-After: 1) twice, retried on the kept
#   connection; a 503 that closes handed over; deadline_header on each
#   request; certificate failures as bare; its offer of h2 and http/1.1 through nginx, as gnutls-cli's;
#   wget and git on a kept-alive 503 whose connection the server then
#   resets (on the resend, during the wait) or closes: the 503 handed
#   over as it came, each ending as bare after the one wait, never hanging;
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

# A kept-alive 503 (Retry-After: 1) on a connection the server then
# resets, on the resend ("rst") or during the wait ("rstwait"), or closes
# at once ("drop", announced keep-alive all the same): a GnuTLS
# session is not made anew, so the 503 is handed over as it came, and
# the client ends as bare (its exit, the 503 reported) after the one
# wait, never hanging (run's and bare's timeout), with no new connection.
# rst_case NAME CONN WANT_RC WANT_N MESSAGE CMD...: CMD with the URL's
# path ID appended; WANT_N requests at the server under the library.
rst_case() {
	name=$1 conn=$2 want_rc=$3 want_n=$4 msg=$5 id=rs$2-$S-$(echo "$1" | cut -c1)
	shift 5
	bare "$@" "$base/files/$id-b/2/1/$conn/repo.git"
	b_rc=$rc b_n=$(stat "$id-b" count)
	b_msg=$(grep -c "$msg" "$tmp/out")
	run "$tmp/policy.yaml" "$@" "$base/files/$id-l/2/1/$conn/repo.git"
	n=$(stat "$id-l" count)
	line="$name, 503, then the connection ends ($conn): exit $b_rc bare ($b_n request), $rc under the library ($n), $ms ms"
	if [ $b_rc -ne "$want_rc" ] || [ "$b_msg" = 0 ] || [ "$b_n" != 1 ]; then
		bad "$line: bare is not as the case expects"
	elif [ $rc -ne "$want_rc" ] || ! grep -q "$msg" "$tmp/out" ||
	    [ "$n" != "$want_n" ]; then
		bad "$line (want exit $want_rc, '$msg', $want_n request(s))"
	elif ! grep -q "handed over" "$tmp/out" ||
	    ! grep -q "summary 127.0.0.1: connects=1 " "$tmp/out"; then
		bad "$line: not handed over on its one connection"
	elif [ $ms -lt 1000 ] || [ $ms -ge $((1000 + SLACK)) ]; then
		bad "$line (want the one 1 s wait)"
	else
		ok "$line"
	fi
}
if command -v wget >/dev/null 2>&1; then
	rst_case wget rst 8 2 "ERROR 503" \
		wget -O /dev/null --tries=1 --ca-certificate="$CA"
	rst_case wget rstwait 8 1 "ERROR 503" \
		wget -O /dev/null --tries=1 --ca-certificate="$CA"
	rst_case wget drop 8 1 "ERROR 503" \
		wget -O /dev/null --tries=1 --ca-certificate="$CA"
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
sed 's/retry_after_cap: 5s/retry_after_cap: 5s\n      alpn: keep/' \
	"$tmp/policy.yaml" >"$tmp/keep.yaml"
if ! command -v gnutls-cli >/dev/null 2>&1; then
	skip "gnutls-cli not installed (gnutls-bin): the alpn cases"
elif ! nginx_h2; then
	skip "nginx not installed: the alpn cases"
else
	cli_case "gnutls-cli, h2 and http/1.1, bare" bare "gc1-$S" h2 0 \
		--alpn=h2 --alpn=http/1.1
	cli_case "gnutls-cli, h2 and http/1.1, alpn http/1.1" \
		"$tmp/policy.yaml" "gc2-$S" http/1.1 3 --alpn=h2 --alpn=http/1.1
	cli_case "gnutls-cli, h2 and http/1.1, alpn keep" "$tmp/keep.yaml" \
		"gc3-$S" h2 0 --alpn=h2 --alpn=http/1.1
	cli_case "gnutls-cli, h2 alone, alpn http/1.1" "$tmp/policy.yaml" \
		"gc4-$S" h2 0 --alpn=h2
fi

# git's https helper (git-remote-https, libcurl-gnutls): curl's GnuTLS
# backend gives its session a transport pointer of its own, with its own
# push and pull functions; the session's socket is learnt from its
# handshake (tlsprobe.h).  A static ("dumb") repository behind
# https_server.py's /files/ scenario, 503 with Retry-After: 1 twice.
# Verification stays on: the CA is the test's (GIT_SSL_CAINFO).
# git_run POLICY|bare CAFILE ARGS...: git with that CA, curl's trace
# (its ALPN lines) in $tmp/out; sets rc and ms.
git_run() {
	pol=$1 cafile=$2
	shift 2
	set -- env GIT_SSL_CAINFO="$cafile" GIT_TERMINAL_PROMPT=0 \
		GIT_TRACE_CURL=1 GIT_TRACE_CURL_NO_DATA=1 git "$@"
	if [ "$pol" = bare ]; then
		bare "$@"
	else
		run "$pol" "$@"
	fi
}
repo=$tmp/files/repo.git
git_ready() {
	command -v git >/dev/null 2>&1 && [ -x "$(git --exec-path)/git-remote-https" ] ||
	    { skip "git or its https helper not installed: the git cases"; return 1; }
	git init -q --bare "$repo" && git init -q "$tmp/w" &&
	    echo "resolute $S" >"$tmp/w/f" && git -C "$tmp/w" add f &&
	    git -C "$tmp/w" -c user.name=t -c user.email=t@t commit -qm one &&
	    git -C "$tmp/w" push -q "$repo" HEAD:refs/heads/main &&
	    git -C "$repo" symbolic-ref HEAD refs/heads/main &&
	    git -C "$repo" update-server-info ||
	    { bad "git: could not make the test repository"; return 1; }
	head=$(git -C "$repo" rev-parse main)
	# Under `make asan`: git's helper with the sanitizer runtime alone.
	case ${RS_LIB:-} in
	*" "*) LD_PRELOAD="${RS_LIB% *}" GIT_SSL_CAINFO="$CA" timeout 10 \
		git ls-remote "$base/files/gok-$S/0/0/ka/repo.git" >/dev/null 2>&1 ||
		    { skip "git: its https helper does not run with the sanitizer runtime preloaded (bare as well)"; return 1; } ;;
	esac
}
# git_case NAME POLICY ID CONN WANT_RC WANT_N WAIT_MS: ls-remote of the
# repository behind 503 twice; WANT_N requests, WAIT_MS (0 or 2000) their
# span at the server; the refs printed, over one connection, when WANT_RC
# is 0, else the 503 reported without a wait.
git_case() {
	name=$1 pol=$2 id=$3 conn=$4 want_rc=$5 want_n=$6 wait=$7
	git_run "$pol" "$CA" ls-remote "$base/files/$id/2/1/$conn/repo.git"
	n=$(stat "$id" count) span=$(stat "$id" span_ms)
	line="$name: exit $rc, $n request(s), $span ms apart, $ms ms"
	if [ $rc -ne "$want_rc" ] || [ "$n" != "$want_n" ]; then
		bad "$line (want exit $want_rc, $want_n)"
	elif [ "$want_rc" = 0 ] && ! grep -q "^$head	refs/heads/main" "$tmp/out"; then
		bad "$line: no refs printed"
	elif [ "$want_rc" = 0 ] && [ "$pol" != bare ] &&
	    ! grep -q "summary 127.0.0.1: connects=1 " "$tmp/out"; then
		bad "$line: not over one connection"
	elif [ "$want_rc" != 0 ] && { ! grep -q "returned error: 503" "$tmp/out" ||
	    [ $ms -ge $((SLACK - 1000)) ]; }; then
		bad "$line: the 503 not reported at once"
	elif [ "$span" -lt "$wait" ] || [ "$span" -ge $((wait + SLACK)) ]; then
		bad "$line (want $wait ms apart)"
	else
		ok "$line"
	fi
}
if git_ready; then
	# Bare, what a successful ls-remote asks (info/refs, HEAD): n0.
	git_run bare "$CA" ls-remote "$base/files/g0-$S/0/0/ka/repo.git"
	n0=$(stat "g0-$S" count)
	git_case "git ls-remote, 503 twice, bare" bare "g1-$S" ka 128 1 0
	git_case "git ls-remote, 503 twice, http" "$tmp/policy.yaml" "g2-$S" \
		ka 0 $((n0 + 2)) 2000
	# A 503 that closes the connection is handed over as it came (no
	# new handshake for GnuTLS): git reports it at once.
	git_case "git ls-remote, 503 closing, http: handed over" \
		"$tmp/policy.yaml" "g3-$S" close 128 1 0
	rst_case "git ls-remote" rst 128 2 "returned error: 503" env \
		GIT_SSL_CAINFO="$CA" GIT_TERMINAL_PROMPT=0 git ls-remote
	rst_case "git ls-remote" rstwait 128 1 "returned error: 503" env \
		GIT_SSL_CAINFO="$CA" GIT_TERMINAL_PROMPT=0 git ls-remote
	rst_case "git ls-remote" drop 128 1 "returned error: 503" env \
		GIT_SSL_CAINFO="$CA" GIT_TERMINAL_PROMPT=0 git ls-remote
	# A clone: the busy spell on its first request, then every object.
	git_run bare "$CA" clone -q "$base/files/gc0-$S/0/0/ka/repo.git" "$tmp/c0"
	c0=$(stat "gc0-$S" count)
	git_run "$tmp/policy.yaml" "$CA" clone -q \
		"$base/files/gc1-$S/2/1/ka/repo.git" "$tmp/c1"
	n=$(stat "gc1-$S" count) span=$(stat "gc1-$S" span_ms)
	line="git clone, 503 twice, http: exit $rc, $n request(s) (bare's $c0 + 2), $span ms apart, $ms ms"
	if [ $rc -eq 0 ] && [ "$n" = $((c0 + 2)) ] && [ "$span" -ge 2000 ] &&
	    [ "$span" -lt $((2000 + SLACK)) ] &&
	    grep -q "summary 127.0.0.1: connects=1 " "$tmp/out" &&
	    [ "$(cat "$tmp/c1/f" 2>/dev/null)" = "resolute $S" ]; then
		ok "$line"
	else
		bad "$line"
	fi
	# deadline_header alone: the session is learnt for it too, and each
	# request head gets the header (bare: none).
	gdl=$(($(now_ms) + 20000)) want=""
	i=0
	while [ $i -lt "$n0" ]; do want="$want${want:+ }$gdl"; i=$((i + 1)); done
	export RESOLUTE_DEADLINE=$gdl
	git_run "$tmp/dh.yaml" "$CA" ls-remote "$base/files/gd-$S/0/0/ka/repo.git"
	unset RESOLUTE_DEADLINE
	got=$(stat "gd-$S" deadlines)
	if [ $rc -eq 0 ] && [ "$got" = "$want" ]; then
		ok "git ls-remote, deadline_header: the header on each of its $n0 requests"
	else
		bad "git ls-remote, deadline_header: exit $rc, server saw '$got' (want '$want')"
	fi
	# Certificates checked as bare: another CA, another name.
	cert_case() {
		name=$1 cafile=$2 url=$3 id=$4
		git_run bare "$cafile" ls-remote "$url/files/$id-b/2/1/ka/repo.git"
		want=$(sed -n "s/^fatal: unable to access '[^']*': //p" "$tmp/out")
		brc=$rc
		git_run "$tmp/policy.yaml" "$cafile" ls-remote \
			"$url/files/$id-l/2/1/ka/repo.git"
		got=$(sed -n "s/^fatal: unable to access '[^']*': //p" "$tmp/out")
		n=$(($(stat "$id-b" count) + $(stat "$id-l" count)))
		line="git, $name: exit $brc bare, $rc under the library ('$got'), $n request(s)"
		if [ $brc -ne 0 ] && [ $rc -eq $brc ] && [ -n "$want" ] &&
		    [ "$got" = "$want" ] && [ "$n" = 0 ]; then
			ok "$line"
		else
			bad "$line (bare: '$want')"
		fi
	}
	# Another CA: the other name's certificate, which issued nothing.
	cert_case "an unknown CA" "$tmp/bad.pem" "$base" "gca-$S"
	arm 0
	cert_case "a certificate for another name" "$CA" "$base_b" "gcn-$S"

	# ALPN: curl offers h2 and http/1.1; through nginx with http2 the
	# offer becomes http/1.1 alone under `alpn: http/1.1`, and h2 is
	# agreed bare and under `alpn: keep` (the 503 reaches git).
	# ng_git NAME POLICY ID WANT_PROTO WANT_RC WANT_N
	ng_git() {
		name=$1 pol=$2 id=$3 want_p=$4 want_rc=$5 want_n=$6
		git_run "$pol" "$CA" ls-remote "https://127.0.0.1:$NG/files/$id/2/1/ka/repo.git"
		proto=$(sed -n 's/.*ALPN: server accepted //p' "$tmp/out")
		n=$(stat "$id" count) span=$(stat "$id" span_ms)
		said=$(grep -c 'http retries off: h2 negotiated' "$tmp/out")
		line="$name: $proto, exit $rc, $n request(s), $span ms apart, 'h2 negotiated' said $said time(s)"
		if [ "$proto" != "$want_p" ] || [ $rc -ne "$want_rc" ] ||
		    [ "$n" != "$want_n" ]; then
			bad "$line (want $want_p, exit $want_rc, $want_n)"
		elif [ "$want_rc" = 0 ] && { [ "$span" -lt 2000 ] ||
		    [ "$span" -ge $((2000 + SLACK)) ]; }; then
			bad "$line (want 2000 ms apart)"
		elif [ "$pol" = "$tmp/keep.yaml" ] && [ "$said" != 1 ]; then
			bad "$line (want it said once)"
		else
			ok "$line"
		fi
	}
	if [ -z "$ng_pid" ] && ! nginx_h2; then
		skip "nginx not installed: git's alpn cases"
	else
		ng_git "git via nginx (h2), bare" bare "gn1-$S" h2 128 1
		ng_git "git via nginx (h2), alpn http/1.1" "$tmp/policy.yaml" \
			"gn2-$S" http/1.1 0 $((n0 + 2))
		ng_git "git via nginx (h2), alpn keep" "$tmp/keep.yaml" \
			"gn3-$S" h2 128 1
	fi
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
