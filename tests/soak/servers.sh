# SPDX-License-Identifier: MIT
# shellcheck shell=sh disable=SC2154 # dir, pgdir, pgbin: set by run.sh
# servers.sh - sourced by tests/soak/run.sh: the soak's servers, started,
# killed and frozen as a group.  Every one listens on all addresses of the
# private namespace (loopback only): 127.0.0.1, and 127.0.0.11 and .12,
# the two addresses the soak's DNS server gives every name.
#
#   echo   servers.py echo    SOAK_ECHO  (port 7001)
#   web    servers.py http    SOAK_WEB (8001) and SOAK_WEB2 (8002), and
#                             with TLS on, SOAK_WEBS (8443, HTTPS)
#   redis  redis-server       SOAK_REDIS (6380), nothing on disk
#   pg     postgres           SOAK_PG (5433), from a throw-away data
#                             directory, as "nobody" (postgres refuses root)
#
# Redis and PostgreSQL command lines are those of
# tests/programs/test_services_{redis,postgres}.sh.

# shellcheck disable=SC2034 # P_CHAIN: run.sh starts the chain service
P_ECHO=7001 P_WEB=8001 P_WEB2=8002 P_CHAIN=8003 P_REDIS=6380 P_PG=5433
P_WEBS=8443
srv_echo="" srv_web="" srv_redis="" srv_pg=""
have_redis=0 have_pg=0

# as_nobody CMD...: replaces the (sub)shell with CMD run as nobody.
as_nobody() {
	exec setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
}

srv_start_echo() {
	python3 tests/soak/servers.py echo "$P_ECHO" "$dir" --life 90000 \
	    >/dev/null 2>>"$dir/servers.log" &
	srv_echo=$!
}

srv_start_web() {
	python3 tests/soak/servers.py http "$P_WEB,$P_WEB2${SOAK_WEBS:+,$P_WEBS}" \
	    "$dir" --life 90000 \
	    >/dev/null 2>>"$dir/servers.log" &
	srv_web=$!
}

srv_start_redis() {
	[ "$have_redis" = 1 ] || return 0
	redis-server --port "$P_REDIS" --bind '*' --protected-mode no \
	    --save '' --appendonly no \
	    --daemonize no --logfile '' --maxclients 1000 \
	    >>"$dir/redis.log" 2>&1 &
	srv_redis=$!
}

srv_start_pg() {
	[ "$have_pg" = 1 ] || return 0
	(as_nobody "$pgbin/postgres" -D "$pgdir/data" -p "$P_PG" -k "$pgdir" \
	    -c listen_addresses='*' -c fsync=off -c synchronous_commit=off \
	    -c full_page_writes=off -c max_connections=200 \
	    >>"$pgdir/server.log" 2>&1) &
	srv_pg=$!
}

srv_pg_ready() {
	"$pgbin/pg_isready" -q -h "$pgdir" -p "$P_PG"
}

# srv_init: finds out which of Redis and PostgreSQL can run (and says
# why not), and prepares PostgreSQL's data directory.
srv_init() {
	if command -v redis-server >/dev/null && command -v redis-cli >/dev/null
	then
		have_redis=1
	else
		echo "soak: Redis left out: redis-server/redis-cli not installed" \
		    "(scripts/deps.sh installs redis-server, redis-tools)"
	fi
	pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	if [ -z "$pgbin" ] || ! command -v psql >/dev/null; then
		echo "soak: PostgreSQL left out: not installed (scripts/deps.sh" \
		    "installs postgresql, postgresql-contrib)"
		return 0
	fi
	chown nobody:nogroup "$pgdir"
	if (as_nobody "$pgbin/initdb" -D "$pgdir/data" -U postgres \
	    --auth=trust --no-sync -E UTF8) >"$pgdir/initdb.log" 2>&1; then
		# Clients come from the names' addresses, 127.0.0.11 and .12.
		echo 'host all all 127.0.0.0/8 trust' >>"$pgdir/data/pg_hba.conf"
		have_pg=1
	else
		echo "soak: PostgreSQL left out: initdb failed:" \
		    "$(tail -1 "$pgdir/initdb.log")"
	fi
}

srv_start_all() {
	srv_start_echo
	srv_start_web
	srv_start_redis
	srv_start_pg
}

# srv_wait_ready: every server answers (bounded: 30 s); 1 if one never does.
srv_wait_ready() {
	i=0
	while [ $i -lt 300 ]; do
		i=$((i + 1))
		sleep 0.1
		ss -Htln "sport = :$P_ECHO" | grep -q . || continue
		ss -Htln "sport = :$P_WEB2" | grep -q . || continue
		if [ "$have_redis" = 1 ]; then
			redis-cli -p "$P_REDIS" PING 2>/dev/null | grep -q PONG ||
			    continue
		fi
		if [ "$have_pg" = 1 ]; then
			srv_pg_ready || continue
		fi
		return 0
	done
	return 1
}

# srv_pids: every server process, PostgreSQL's backends included ($srv_pg
# is the postmaster itself: as_nobody replaces the subshell with it).
srv_pids() {
	echo $srv_echo $srv_web $srv_redis $srv_pg
	[ -n "$srv_pg" ] && ps -o pid= --ppid "$srv_pg" 2>/dev/null
}

# srv_signal SIG: sends SIG to every server process.
srv_signal() {
	# shellcheck disable=SC2046 # a list of pids
	kill -"$1" $(srv_pids) 2>/dev/null
}

# srv_kill_all: the restart fault's first half: every server dies at
# once (PostgreSQL by an immediate shutdown, SIGQUIT, which takes its
# backends with it; the others by SIGKILL).
srv_kill_all() {
	srv_signal CONT
	# shellcheck disable=SC2086 # a list of pids
	kill -KILL $srv_echo $srv_web $srv_redis 2>/dev/null
	[ -n "$srv_pg" ] && kill -QUIT "$srv_pg" 2>/dev/null
	# shellcheck disable=SC2086
	wait $srv_echo $srv_web $srv_redis $srv_pg 2>/dev/null
	srv_echo="" srv_web="" srv_redis="" srv_pg=""
}
