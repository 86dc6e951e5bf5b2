#!/bin/sh
# SPDX-License-Identifier: MIT
# test_services_mariadb.sh - MariaDB and the mariadb client under the
# library: a server restarting, a port dropping SYNs, a server frozen after
# the handshake (see services.sh), and a mariadb-slap load run with read
# and write timeouts set that must end without an error.
# The server runs from a throw-away data directory (mariadb-install-db, no
# configuration files read) on a loopback port, as "nobody" when run as
# root.
#
# The client (libmariadb) prints the errno of its non-blocking connect,
# EINPROGRESS (115), for every failure to connect, refused or timed out,
# bare as well: "Can't connect to server on 'HOST' (115)".  Its words cannot
# name the cause, so the cases check that exact message (and never a reset,
# 104); the library's log line in the output names the timeout.
set -u
svc_self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/../.." || exit 2
svc_name=mariadb
svc_answer='^42$'
svc_refused_re="Can't connect to server on '127.0.0.1' \\((111|115)\\)"
svc_timeout_re="Can't connect to server on '127.0.0.2' \\((110|115)\\)"
svc_frozen_re='Lost connection|timed out|\(110\)'

svc_client() {
	case $1 in
	query) mariadb --no-defaults -h "$2" -P "$3" -uroot -N -e 'select 42' ;;
	late)
		svc_late_query 'select 42;' |
		    mariadb --no-defaults -h "$2" -P "$3" -uroot -N ;;
	esac
}

# shellcheck source=tests/programs/services.sh
. tests/programs/services.sh
svc_need "mariadb-server, mariadb-client" mariadbd mariadb-install-db mariadb mariadb-admin mariadb-slap

svc_start() {
	svc_exec_as mariadbd --no-defaults --datadir="$svc_dir/data" \
	    --socket="$svc_dir/sock" --port="$port" --bind-address=127.0.0.1 \
	    --skip-name-resolve --innodb-buffer-pool-size=16M \
	    --innodb-log-file-size=8M --performance-schema=OFF \
	    --pid-file="$svc_dir/pid" --log-error="$svc_tmp/server.log" \
	    >>"$svc_tmp/server.log" 2>&1 &
	svc_pid=$!
}

svc_ready() {
	mariadb-admin --no-defaults -S "$svc_dir/sock" -uroot ping
}

# A connection from 127.0.0.1 that has logged in and waits for a query.
svc_idle() {
	mariadb-admin --no-defaults -S "$svc_dir/sock" -uroot processlist |
	    grep -Eq '\| 127\.0\.0\.1:[0-9]+ .*\| Sleep '
}

port=$(svc_port)
if ! svc_as_server mariadb-install-db --no-defaults --datadir="$svc_dir/data" \
    --auth-root-authentication-method=normal --skip-test-db \
    >"$svc_tmp/install.log" 2>&1; then
	echo "SKIPPED: mariadb-install-db failed: $(tail -1 "$svc_tmp/install.log")"
	exit 0
fi
svc_launch mariadbd

svc_case_restart
svc_case_drop
svc_case_frozen

# load: mariadb-slap, 4 clients, 2,000 generated queries, bare then under
# the library; both must succeed.
slap() {
	t0_slap=$(now_ms)
	timeout -k 2 60 "$@" mariadb-slap --no-defaults -h 127.0.0.1 -P "$port" \
	    -uroot --auto-generate-sql --concurrency=4 --iterations=1 \
	    --number-of-queries=2000 >"$svc_tmp/out" 2>&1
	rc=$?
	slap_ms=$(($(now_ms) - t0_slap))
	errors=$(grep -ci 'error' "$svc_tmp/out")
}
slap env
bare_rc=$rc bare_ms=$slap_ms
slap env LD_PRELOAD="$RS_LIB" RESOLUTE_POLICY="$svc_tmp/load.yaml"
echo "      load: mariadb-slap 2000 queries bare $bare_ms ms (exit $bare_rc), library $slap_ms ms (exit $rc, $errors errors)"
if [ "$bare_rc" = 0 ] && [ "$rc" = 0 ] && [ "$errors" = 0 ]; then
	svc_pass "load: mariadb-slap, no errors"
else
	svc_fail "load: mariadb-slap exit $rc, $errors error lines"
fi
svc_stop
svc_finish
