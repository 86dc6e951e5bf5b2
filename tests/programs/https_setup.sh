# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# shellcheck disable=SC2034 # its variables are the sourcing tests'
# https_setup.sh - sourced by the tests of HTTP over TLS
# (test_https_retry.sh, test_https_gnutls.sh): a throw-away CA and
# certificates made by the openssl CLI, https_server.py started on two
# ports ($base, $base_b), the retry policies ($tmp/policy.yaml and
# $tmp/inject.yaml), and the helpers: ok/bad/skip, stat ID FIELD (the
# server's counters), arm N, run POLICY CMD... and bare CMD... (rc, ms).
# Ends the server and removes $tmp at exit.
cd "$(dirname "$0")/../.." || exit 2
B=${RS_BUILD:-$PWD/build}
LIB=${RS_LIB:-$B/libresolute.so}
SLACK=$((2000 + ${RS_SLACK_MS:-0}))
HERE=$PWD/tests/programs
# shellcheck source=tests/programs/sanitizer.sh
. tests/programs/sanitizer.sh
tmp=$(mktemp -d /tmp/rs-https-XXXXXX)
server_pid=""
cleanup() {
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
	[ -n "$ng_pid" ] && kill "$ng_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fails=0 passes=0 skips=0
ok() { echo "ok    $*"; passes=$((passes + 1)); }
bad() { echo "FAIL  $*"; fails=$((fails + 1)); sed 's/^/    | /' "$tmp/out" | tail -8; }
skip() { echo "SKIP  $*"; skips=$((skips + 1)); }

# A CA, the server's certificate (localhost, 127.0.0.1) and one for
# another name, signed by the same CA.
cert() {
	openssl req -newkey rsa:2048 -nodes -keyout "$tmp/$1.key" \
		-out "$tmp/$1.csr" -subj "/CN=$2" 2>/dev/null &&
	    printf 'subjectAltName=%s\n' "$3" >"$tmp/$1.ext" &&
	    openssl x509 -req -in "$tmp/$1.csr" -CA "$tmp/ca.pem" \
		-CAkey "$tmp/ca.key" -CAcreateserial -out "$tmp/$1.pem" \
		-days 2 -extfile "$tmp/$1.ext" 2>/dev/null
}
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/ca.key" \
	-out "$tmp/ca.pem" -days 2 -subj /CN=resolute-test-ca 2>/dev/null &&
    cert good localhost DNS:localhost,IP:127.0.0.1 &&
    cert bad wrong.invalid DNS:wrong.invalid ||
	{ echo "openssl could not make the test certificates"; exit 1; }
CA=$tmp/ca.pem
mkdir -p "$tmp/files"

python3 "$HERE/https_server.py" --cert "$tmp/good.pem" --key "$tmp/good.key" \
	--bad-cert "$tmp/bad.pem" --bad-key "$tmp/bad.key" \
	--files "$tmp/files" --port-file "$tmp/port" --lifetime 300 \
	2>"$tmp/server.log" &
server_pid=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
read -r port port_b <"$tmp/port" || { echo "https_server.py did not start"; exit 1; }
base=https://127.0.0.1:$port
base_b=https://127.0.0.1:$port_b

cat >"$tmp/policy.yaml" <<'YAML'
version: 1
hosts:
  - match: 127.0.0.1
    backoff: { base: 100ms, cap: 1s }
    retry_budget: { ratio: 1, min_per_second: 1000, window: 10s, scope: process }
    http:
      retry_on_status: [429, 503]
      attempts: 3
      retry_after_cap: 5s
YAML
sed 's/retry_after_cap: 5s/retry_after_cap: 5s\n      idempotency_key: inject/' \
	"$tmp/policy.yaml" >"$tmp/inject.yaml"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# stat ID FIELD: count, span_ms, keys (distinct non-empty), nokey.
stat() {
	python3 -c 'import json, ssl, sys, urllib.request
c = ssl.create_default_context(cafile=sys.argv[3])
s = json.load(urllib.request.urlopen(sys.argv[1], context=c)); f = sys.argv[2]
t = s["times"]
if f == "count": print(s["count"])
elif f == "span_ms": print(int((t[-1] - t[0]) * 1000) if t else 0)
elif f == "keys": print(" ".join(sorted({k for k in s["keys"] if k})))
elif f == "nokey": print(sum(1 for k in s["keys"] if not k))
elif f == "deadlines": print(" ".join(",".join(d) or "-" for d in s["deadlines"]))' \
		"$base/_stats/$1" "$2" "$CA"
}
arm() { curl -s --cacert "$CA" "$base/_arm/$1" >/dev/null; }

# run POLICY CMD...: CMD under the library, bounded; sets rc and ms.
run() {
	pol=$1
	shift
	start=$(now_ms)
	timeout 30 env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$pol" \
		RESOLUTE_LOG=${RS_LOGLEVEL:-info} "$@" >"$tmp/out" 2>&1
	rc=$?
	ms=$(($(now_ms) - start))
}
bare() {
	start=$(now_ms)
	timeout 30 "$@" >"$tmp/out" 2>&1
	rc=$?
	ms=$(($(now_ms) - start))
}

GETS=$HERE/http/gets.sh
# Under `make asan` curl deadlocks at start-up with the sanitizer runtime
# alone (sanitizer.sh): its cases are skipped there, said once each, and
# the TLS layer is exercised under the sanitizer by python3, wget and perl.
CURL_OK=1
usable curl --version >/dev/null || CURL_OK=0
curl_ok() {
	[ $CURL_OK = 1 ] && return 0
	skip "$1: curl does not start with the sanitizer runtime preloaded (bare as well)"
	return 1
}
export RS_CA="$CA"

# nginx_h2: nginx with TLS, http2 and http/1.1 on 127.0.0.1:$NG, in front
# of https_server.py (pid $ng_pid, ended at exit); false without nginx.
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
ng_pid=""
nginx_h2() {
	[ -x "$NGINX" ] || return 1
	NG=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	[ "$(id -u)" = 0 ] && USER_LINE="user nobody nogroup;" || USER_LINE=""
	mkdir -p "$tmp/ng/logs" "$tmp/ng/temp"
	cat >"$tmp/ng/nginx.conf" <<NGX
$USER_LINE
daemon off;
worker_processes 1;
pid $tmp/ng/nginx.pid;
error_log $tmp/ng/logs/error.log warn;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $tmp/ng/temp/body;
	proxy_temp_path $tmp/ng/temp/proxy;
	fastcgi_temp_path $tmp/ng/temp/fastcgi;
	uwsgi_temp_path $tmp/ng/temp/uwsgi;
	scgi_temp_path $tmp/ng/temp/scgi;
	server {
		listen 127.0.0.1:$NG ssl http2;
		ssl_certificate $tmp/good.pem;
		ssl_certificate_key $tmp/good.key;
		location / { proxy_pass $base; proxy_http_version 1.1; }
	}
}
NGX
	timeout 120 "$NGINX" -p "$tmp/ng" -c "$tmp/ng/nginx.conf" \
		-e "$tmp/ng/logs/error.log" 2>"$tmp/ng/stderr" &
	ng_pid=$!
	i=0
	while ! python3 -c 'import socket, sys
socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$NG" 2>/dev/null &&
	    [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
}
