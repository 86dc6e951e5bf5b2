#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/services.sh - throw-away Redis and PostgreSQL servers on loopback
# for the benchmarks, sourced by scripts/bench.sh.
#
# Each start_* function sets REDIS_PORT (PG_PORT) to the port it listens
# on, or leaves it empty when the server cannot be started (the caller says
# SKIPPED and why); stop_services
# ends what was started.  Data lives under $SVC_DIR, removed afterwards.
# PostgreSQL refuses to run as root, so it runs as the `postgres` (or
# `nobody`) user when started by root.
# shellcheck disable=SC2034 # REDIS_PORT and PG_PORT are for the caller

SVC_DIR=${SVC_DIR:-$(mktemp -d /tmp/rs-bench-svc-XXXXXX)}
SVC_PIDS=""

# free_port: a TCP port on 127.0.0.1 that nothing listens on now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_port PORT: up to 10 s for something to listen on 127.0.0.1:PORT.
wait_port() {
	i=0
	while [ $i -lt 100 ]; do
		python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $1), 0.2)" \
			2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# start_redis [PIN]: redis-server without persistence.
start_redis() {
	REDIS_PORT=""
	command -v redis-server >/dev/null 2>&1 || return 0
	port=$(free_port)
	# shellcheck disable=SC2086 # $1 is a command prefix or nothing
	${1:-} redis-server --port "$port" --bind 127.0.0.1 --save '' \
		--appendonly no --dir "$SVC_DIR" >"$SVC_DIR/redis.log" 2>&1 &
	SVC_PIDS="$SVC_PIDS $!"
	wait_port "$port" && REDIS_PORT=$port
}

# The user PostgreSQL runs as.
pg_user() {
	if [ "$(id -u)" != 0 ]; then
		id -un
	elif id postgres >/dev/null 2>&1; then
		echo postgres
	else
		echo nobody
	fi
}

# as_pg CMD...: runs CMD as the PostgreSQL user.
as_pg() {
	if [ "$(id -u)" = 0 ]; then
		su -s /bin/sh "$(pg_user)" -c "$*"
	else
		sh -c "$*"
	fi
}

# pg_bin NAME: a PostgreSQL server program (Debian keeps them off PATH).
pg_bin() {
	for d in /usr/lib/postgresql/*/bin; do
		[ -x "$d/$1" ] && { echo "$d/$1"; return; }
	done
	command -v "$1"
}

# start_postgres [PIN]: a cluster with fsync off, trust authentication.
start_postgres() {
	PG_PORT=""
	initdb=$(pg_bin initdb) pg_ctl=$(pg_bin pg_ctl)
	[ -n "$initdb" ] && [ -n "$pg_ctl" ] || return 0
	port=$(free_port)
	mkdir -p "$SVC_DIR/pg"
	[ "$(id -u)" = 0 ] && chown "$(pg_user)" "$SVC_DIR" "$SVC_DIR/pg"
	as_pg "$initdb -D $SVC_DIR/pg/data -A trust -U postgres" \
		>"$SVC_DIR/initdb.log" 2>&1 || return 0
	# shellcheck disable=SC2086 # $1 is a command prefix or nothing
	as_pg "${1:-} $pg_ctl -D $SVC_DIR/pg/data -l $SVC_DIR/pg/log -w start \
		-o '-p $port -k $SVC_DIR/pg -c listen_addresses=127.0.0.1 \
		-c fsync=off -c synchronous_commit=off -c full_page_writes=off'" \
		>/dev/null 2>&1 || return 0
	PG_STARTED=1
	PG_PORT=$port
}

stop_services() {
	if [ -n "${PG_STARTED:-}" ]; then
		as_pg "$(pg_bin pg_ctl) -D $SVC_DIR/pg/data -m immediate stop" \
			>/dev/null 2>&1
	fi
	for p in $SVC_PIDS; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$SVC_DIR"
}
