#!/bin/sh
# SPDX-License-Identifier: MIT
# test_nginx.sh - nginx as a reverse proxy under the library, started the
# way a systemd drop-in starts it: LD_PRELOAD, RESOLUTE_POLICY and
# RESOLUTE_LOG_FILE in its environment, and no `env` directive in
# nginx.conf.  nginx's workers keep only TZ of their environment, so the
# library must take its settings from the environment the process started
# with (SPEC 3).
#
#   restarting upstream  refuses for 1.5 s, then serves: curl through nginx
#                        gets 502 bare, 200 under the library (8 attempts),
#                        and the retries are in RESOLUTE_LOG_FILE
#   blackholed upstream  (netns only) 127.0.0.2 drops SYNs: 502 within the
#                        policy's window (2 attempts of 300 ms and a wait
#                        of 100 ms: 700 ms), not nginx's 10 s timeout
#
# As root the workers run as nobody (`user nobody nogroup`); otherwise as
# the caller.  Everything lives in a temporary prefix; every command is
# bounded.  RS_BUILD and RS_LIB come from scripts/run-tests.sh.
set -u
: "${RS_BUILD:?set by scripts/run-tests.sh}"
RS_LIB=${RS_LIB:-$RS_BUILD/libresolute.so}
SLACK=$((300 + ${RS_SLACK_MS:-0}))
[ "$SLACK" -lt 300 ] && SLACK=300
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
fails=0
# shellcheck source=tests/programs/lib.sh
. "$(dirname "$0")/lib.sh"
pids=""

if [ ! -x "$NGINX" ] || ! command -v curl >/dev/null 2>&1; then
	echo "SKIPPED: nginx (nginx-light) or curl not installed"
	exit 0
fi
tmp=$(mktemp -d /tmp/rs-nginx-XXXXXX)
chmod 755 "$tmp"

# shellcheck disable=SC2317  # called by the trap below
cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# free_port: a port nothing listens on (bound and released at once).
free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

UP=$(free_port)
NG=$(free_port)
[ "$(id -u)" = 0 ] && USER_LINE="user nobody nogroup;" || USER_LINE=""
mkdir -p "$tmp/logs" "$tmp/temp"
cat >"$tmp/nginx.conf" <<EOF
$USER_LINE
daemon off;
master_process on;
worker_processes 1;
pid $tmp/nginx.pid;
error_log $tmp/logs/error.log info;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $tmp/temp/body;
	proxy_temp_path $tmp/temp/proxy;
	fastcgi_temp_path $tmp/temp/fastcgi;
	uwsgi_temp_path $tmp/temp/uwsgi;
	scgi_temp_path $tmp/temp/scgi;
	server {
		listen 127.0.0.1:$NG;
		location = /health { return 200 "up\n"; }
		location /restart/ {
			proxy_pass http://127.0.0.1:$UP/;
			proxy_connect_timeout 10s;
		}
		location /hole/ {
			proxy_pass http://127.0.0.2:80/;
			proxy_connect_timeout 10s;
		}
	}
}
EOF
cat >"$tmp/policy.yaml" <<'YAML'
version: 1
defaults:
  connect_timeout: 1s
  attempts: 8
  retry_budget: {ratio: 1, min_per_second: 1000, window: 10s, scope: process}
  backoff: {base: 100ms, cap: 1s, multiplier: 2, jitter: equal}
hosts:
  - match: 127.0.0.2
    connect_timeout: 300ms
    attempts: 2
    backoff: {base: 100ms, cap: 1s, multiplier: 2, jitter: none}
YAML
chmod 644 "$tmp/policy.yaml"

# start_nginx [preload]: starts nginx in the foreground (in the background
# of this shell) as a systemd unit with the drop-in would, and waits until
# it answers.
start_nginx() {
	: >"$tmp/resolute.log"
	chmod 666 "$tmp/resolute.log"
	: >"$tmp/logs/error.log"
	if [ "${1:-}" = preload ]; then
		env LD_PRELOAD="$RS_LIB" RESOLUTE_POLICY="$tmp/policy.yaml" \
		    RESOLUTE_LOG=info RESOLUTE_LOG_FILE="$tmp/resolute.log" \
		    timeout 60 "$NGINX" -p "$tmp" -c "$tmp/nginx.conf" \
		    -e "$tmp/logs/error.log" 2>>"$tmp/logs/stderr" &
	else
		timeout 60 "$NGINX" -p "$tmp" -c "$tmp/nginx.conf" \
		    -e "$tmp/logs/error.log" 2>>"$tmp/logs/stderr" &
	fi
	NGINX_PID=$!
	pids="$pids $NGINX_PID"
	i=0
	while [ $i -lt 100 ]; do
		[ "$(curl -s -m 1 "http://127.0.0.1:$NG/health")" = up ] &&
			return 0
		sleep 0.05
		i=$((i + 1))
	done
	fail "nginx did not start: $(cat "$tmp/logs/error.log" \
	    "$tmp/logs/stderr" 2>/dev/null)"
	exit 1
}

stop_nginx() {
	kill "$NGINX_PID" 2>/dev/null
	wait "$NGINX_PID" 2>/dev/null
}

# start_upstream: the peer on port UP, refusing for 1.5 s, then serving;
# UP_T0 is a time before its start, from which the 1.5 s are measured.
start_upstream() {
	UP_T0=$(now_ms)
	"$RS_BUILD/itests/peer" late -p "$UP" -d 1500 -l 20000 \
	    >"$tmp/port" &
	PEER_PID=$!
	pids="$pids $PEER_PID"
	i=0
	while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do
		sleep 0.02
		i=$((i + 1))
	done
}

stop_upstream() {
	kill "$PEER_PID" 2>/dev/null
	wait "$PEER_PID" 2>/dev/null
}

# get PATH: curl through nginx; sets CODE (the HTTP status) and MS.
get() {
	t0=$(now_ms)
	CODE=$(curl -s -m 15 -o /dev/null -w '%{http_code}' \
	    "http://127.0.0.1:$NG$1")
	MS=$(($(now_ms) - t0))
}

restarting_upstream() {
	start_nginx
	start_upstream
	get /restart/
	stop_upstream
	stop_nginx
	if [ "$CODE" = 502 ]; then
		ok "bare nginx: 502 from a restarting upstream ($MS ms)"
	else
		fail "bare nginx: $CODE from a restarting upstream, expected 502"
	fi
	start_nginx preload
	start_upstream
	get /restart/
	# Measured from the upstream's start, not from curl's: the time
	# this shell takes to see the upstream's port (more than 100 ms on a
	# loaded machine) comes off the time curl waits.
	up_ms=$((t0 + MS - UP_T0))
	stop_upstream
	stop_nginx
	retries=$(grep -c 'connection refused; retrying' "$tmp/resolute.log")
	if [ "$CODE" = 200 ] && [ "$up_ms" -ge 1500 ] && [ "$retries" -ge 1 ]; then
		ok "nginx under resolute: 200 after $MS ms ($up_ms ms after" \
		    "the upstream started), $retries retries logged to" \
		    "RESOLUTE_LOG_FILE"
	else
		fail "nginx under resolute: $CODE after $MS ms ($up_ms ms after" \
		    "the upstream started), $retries retries in" \
		    "RESOLUTE_LOG_FILE (expected 200, >= 1500 ms, >= 1)"
		sed 's/^/    | /' "$tmp/resolute.log" "$tmp/logs/error.log"
	fi
}

blackholed_upstream() {
	start_nginx preload
	get /hole/
	stop_nginx
	hi=$((700 + 500 + SLACK))
	if [ "$CODE" = 502 ] && [ "$MS" -ge 700 ] && [ "$MS" -lt $hi ] &&
	    grep -q 'attempt 2/2 failed: timed out' "$tmp/resolute.log"; then
		ok "nginx under resolute: 502 from a blackhole after $MS ms" \
		    "(window 700-$hi)"
	else
		fail "nginx under resolute: $CODE from a blackhole after $MS ms" \
		    "(expected 502 in 700-$hi)"
		sed 's/^/    | /' "$tmp/resolute.log" "$tmp/logs/error.log"
	fi
}

restarting_upstream
if [ "${RS_NETNS:-}" = 1 ]; then
	blackholed_upstream
fi
echo "$fails failed"
[ $fails -eq 0 ] || exit 1
if [ "${RS_NETNS:-}" != 1 ]; then
	echo "SKIPPED: the blackhole case needs scripts/netns.sh (root and nft)"
fi
exit 0
