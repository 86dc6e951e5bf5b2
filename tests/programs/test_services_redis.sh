#!/bin/sh
# SPDX-License-Identifier: MIT
# test_services_redis.sh - Redis and redis-cli under the library: a server
# restarting, a port dropping SYNs, a server frozen after the connection is
# made (see services.sh), and a redis-benchmark load run with read and
# write timeouts set that must end without an error.
# The server keeps nothing on disk and listens on a loopback port and a
# unix socket in a throw-away directory, as "nobody" when run as root.
set -u
svc_self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/../.." || exit 2
svc_name=redis
svc_answer='^PONG$'
svc_refused_re='Connection refused'
svc_timeout_re='timed out'
svc_frozen_re='timed out|recv timeout'
# redis-cli makes a second whole connect when the first fails (bare as
# well: strace shows two), so two logical connects of 1.1 s each.
svc_drop_ms=2200

svc_client() {
	case $1 in
	query) redis-cli -h "$2" -p "$3" PING ;;
	late) svc_late_query PING | redis-cli -h "$2" -p "$3" ;;
	esac
}

# shellcheck source=tests/programs/services.sh
. tests/programs/services.sh
svc_need "redis-server, redis-tools" redis-server redis-cli redis-benchmark

svc_start() {
	svc_exec_as redis-server --port "$port" --bind 127.0.0.1 \
	    --unixsocket "$svc_dir/sock" --dir "$svc_dir" --save '' \
	    --appendonly no --daemonize no --logfile '' \
	    >>"$svc_tmp/server.log" 2>&1 &
	svc_pid=$!
}

svc_ready() {
	redis-cli -s "$svc_dir/sock" PING | grep -q PONG
}

# A client connected from 127.0.0.1 (redis-cli has no handshake).
svc_idle() {
	redis-cli -s "$svc_dir/sock" CLIENT LIST | grep -q ' addr=127\.0\.0\.1:'
}

port=$(svc_port)
svc_launch redis-server

svc_case_restart
svc_case_drop
svc_case_frozen

# load: 20,000 requests each of PING (inline and bulk), SET and GET from 20
# connections, bare then under the library; neither may report an error.
rb() {
	timeout -k 2 60 "$@" redis-benchmark -h 127.0.0.1 -p "$port" -q \
	    -n 20000 -c 20 -t ping,set,get >"$svc_tmp/out" 2>&1
	rc=$?
	rps=$(tr '\r' '\n' <"$svc_tmp/out" |
	    sed -n 's/^\([A-Z_]*\): \([0-9.]*\) requests per second.*/\1 \2/p' |
	    tr '\n' ' ')
	errors=$(tr '\r' '\n' <"$svc_tmp/out" | grep -ci 'error')
}
rb env
bare_rps=$rps bare_rc=$rc bare_errors=$errors
rb env LD_PRELOAD="$RS_LIB" RESOLUTE_POLICY="$svc_tmp/load.yaml"
echo "      load: redis-benchmark bare (exit $bare_rc, $bare_errors errors) $bare_rps"
echo "      load: redis-benchmark library (exit $rc, $errors errors) $rps"
if [ "$bare_rc" = 0 ] && [ "$rc" = 0 ] && [ "$errors" = 0 ] &&
    [ "$(echo "$rps" | wc -w)" = 8 ]; then
	svc_pass "load: redis-benchmark, no errors"
else
	svc_fail "load: redis-benchmark exit $rc, $errors error lines"
fi
svc_stop
svc_finish
