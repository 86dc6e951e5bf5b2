#!/bin/sh
# SPDX-License-Identifier: MIT
# test_services_postgres.sh - PostgreSQL and psql under the library: a
# server restarting, a port dropping SYNs, a server frozen after the
# handshake (see services.sh), and a pgbench load run with read and write
# timeouts set that must end with zero failed transactions.
# The server runs from a throw-away data directory (initdb, trust
# authentication) on a loopback port, as "nobody" when run as root.
set -u
svc_self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/../.." || exit 2
svc_name=postgres
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
svc_answer='^42$'
svc_refused_re='Connection refused'
svc_timeout_re='timed out'
svc_frozen_re='timed out|could not receive'

svc_client() {
	case $1 in
	query)
		psql -X -h "$2" -p "$3" -U postgres -d postgres -Atc 'select 42' ;;
	late)
		svc_late_query 'select 42;' |
		    psql -X -h "$2" -p "$3" -U postgres -d postgres -At ;;
	esac
}

# shellcheck source=tests/programs/services.sh
. tests/programs/services.sh
svc_need "postgresql, postgresql-contrib" psql pgbench "${pgbin:-/nonexistent}/postgres"

# The server offers TLS (a throw-away certificate, made below); the cases
# run in plain text, as before, except the one that asks for TLS.
export PGSSLMODE=disable
svc_ssl=""
svc_start() {
	svc_exec_as "$pgbin/postgres" -D "$svc_dir/data" -p "$port" $svc_ssl \
	    -k "$svc_dir" -c listen_addresses=127.0.0.1 -c fsync=off \
	    -c synchronous_commit=off -c full_page_writes=off \
	    >>"$svc_tmp/server.log" 2>&1 &
	svc_pid=$!
}

svc_ready() {
	"$pgbin/pg_isready" -q -h "$svc_dir" -p "$port"
}

# A backend whose client is on 127.0.0.1 names itself "idle" once it waits
# for a query (update_process_title, on by default).
svc_idle() {
	ps -o args= --ppid "$svc_pid" | grep -q '127\.0\.0\.1([0-9]*) idle$'
}

port=$(svc_port)
if ! svc_as_server "$pgbin/initdb" -D "$svc_dir/data" -U postgres \
    --auth=trust --no-sync -E UTF8 >"$svc_tmp/initdb.log" 2>&1; then
	echo "SKIPPED: initdb failed: $(tail -1 "$svc_tmp/initdb.log")"
	exit 0
fi
if svc_as_server openssl req -x509 -newkey rsa:2048 -nodes -days 1 \
    -subj /CN=localhost -keyout "$svc_dir/data/server.key" \
    -out "$svc_dir/data/server.crt" >/dev/null 2>&1; then
	svc_as_server chmod 600 "$svc_dir/data/server.key"
	svc_ssl="-c ssl=on"
fi
svc_launch postgres

# psql with sslmode=require under a policy with `http` on every connection
# (so that the library follows its TLS session: libpq's records go through
# its own BIO): unharmed, over TLS, as bare.
ssl_query() {
	timeout -k 2 20 "$@" psql -X -h 127.0.0.1 -p "$port" -U postgres \
	    -d "dbname=postgres sslmode=require" -Atc \
	    'select 42, ssl from pg_stat_ssl where pid = pg_backend_pid()' \
	    >"$svc_tmp/out" 2>&1
}
if [ -n "$svc_ssl" ]; then
	printf 'version: 1\ndefaults:\n  http:\n    retry_on_status: [503]\n' \
	    >"$svc_tmp/http.yaml"
	ssl_query env
	bare=$(cat "$svc_tmp/out")
	ssl_query env LD_PRELOAD="$RS_LIB" RESOLUTE_POLICY="$svc_tmp/http.yaml"
	if [ "$bare" = "42|t" ] && [ "$(cat "$svc_tmp/out")" = "42|t" ]; then
		svc_pass "psql sslmode=require under http on every connection: 42 over TLS, as bare"
	else
		svc_fail "psql sslmode=require: bare '$bare', library '$(head -1 "$svc_tmp/out")'"
	fi
else
	svc_skip "psql sslmode=require: no certificate could be made"
fi

svc_case_restart
svc_case_drop
svc_case_frozen

# load: 4 clients for 3 s, bare then under the library; both must report
# zero failed transactions, and the library's throughput is printed.
pgb() {
	timeout -k 2 30 "$@" pgbench -n -c 4 -j 2 -T 3 -h 127.0.0.1 -p "$port" \
	    -U postgres postgres >"$svc_tmp/out" 2>&1
	rc=$?
	tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$svc_tmp/out")
	failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$svc_tmp/out")
}
if ! timeout 60 pgbench -i -q -s 1 -h 127.0.0.1 -p "$port" -U postgres postgres \
    >"$svc_tmp/out" 2>&1; then
	svc_fail "load: pgbench -i failed"
else
	pgb env
	bare_tps=$tps bare_rc=$rc
	pgb env LD_PRELOAD="$RS_LIB" RESOLUTE_POLICY="$svc_tmp/load.yaml"
	echo "      load: pgbench bare $bare_tps tps (exit $bare_rc), library $tps tps, failed: ${failed:-?}"
	if [ "$bare_rc" = 0 ] && [ "$rc" = 0 ] && [ "$failed" = 0 ] && [ -n "$tps" ]; then
		svc_pass "load: pgbench, zero failed transactions, $tps tps"
	else
		svc_fail "load: pgbench exit $rc, failed transactions ${failed:-?}"
	fi
fi
svc_stop
svc_finish
