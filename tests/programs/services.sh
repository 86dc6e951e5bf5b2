# SPDX-License-Identifier: MIT
# shellcheck shell=sh disable=SC2154 # svc_* and port: set by the sourcing test
# services.sh - sourced by the real-service tests (test_services_*.sh):
# a database server on a loopback port with a throw-away data directory,
# and four cases run with its own client, bare and under the library:
#
#   restart  the server restarts and its port refuses for ~1.5 s: the
#            client succeeds under the library, fails bare
#   drop     the client connects to 127.0.0.2, whose SYNs the test
#            namespace drops: it fails within ~1.1 s under the library,
#            naming a timeout, and is still waiting after 5 s bare
#   frozen   the server is stopped (SIGSTOP) once the client's session is
#            open and idle, then the client sends its query: read_timeout
#            (1 s) ends the client, bare it is still waiting after 5 s
#   load     the service's benchmark under the library with read_timeout
#            set: zero errors (defined by each test)
#
# A test sourcing this defines:
#   svc_start         starts the server in the background, sets $svc_pid
#   svc_ready         0 once the server answers (on its unix socket)
#   svc_client MODE HOST PORT   runs the client: MODE "query" connects and
#                     runs one query at once, "late" connects and sends its
#                     query once svc_late_query lets it (it reads stdin)
#   svc_idle          0 once a client on 127.0.0.1 has a session open and
#                     waiting for a query (its handshake done)
# The server runs as "nobody" when the test runs as root (postgres refuses
# root).  Everything it made is removed on exit; every run is bounded.
# The restart and drop cases need the test namespace (scripts/netns.sh,
# root): elsewhere they are skipped, and said so.

# svc_late_query QUERY: the "late" client's standard input.  It prints
# QUERY once the frozen case has stopped the server (the file frozen in
# $svc_sync, which svc_frozen_run exports), writing the time it did into
# $svc_sync/sent, or after 10 s (bounded) if that never happens.
svc_late_query() {
	i=0
	while [ ! -e "$svc_sync/frozen" ] && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	echo $(($(date +%s%N) / 1000000)) >"$svc_sync/sent"
	echo "$1"
}

# The test re-runs itself as "TEST --client MODE HOST PORT" (svc_run): then
# only the client runs.
if [ "${1:-}" = --client ]; then
	svc_client "$2" "$3" "$4"
	exit
fi

# svc_need HINT CMD...: the test is skipped, and says so, unless every CMD
# is installed (HINT: the packages that have them).
svc_need() {
	hint=$1
	shift
	for c in "$@"; do
		command -v "$c" >/dev/null && continue
		echo "SKIPPED: $c not installed ($hint)"
		exit 0
	done
}

SLACK=$((1000 + ${RS_SLACK_MS:-0}))
RS_BUILD=${RS_BUILD:-$PWD/build}
RS_LIB=${RS_LIB:-$RS_BUILD/libresolute.so}
svc_pid=""
svc_drop_ms=${svc_drop_ms:-1100}
svc_passes=0 svc_fails=0 svc_skips=""
svc_tmp=$(mktemp -d /tmp/rs-svc-XXXXXX)
chmod 0755 "$svc_tmp"
# The server's own directory (data, unix socket), owned by its user.
svc_dir=$svc_tmp/server
mkdir "$svc_dir"
[ "$(id -u)" = 0 ] && chown nobody:nogroup "$svc_dir"
svc_nft=resolute_svc_$$

svc_cleanup() {
	if [ -n "$svc_pid" ]; then
		svc_freeze CONT
		kill -KILL "$svc_pid" 2>/dev/null
		wait "$svc_pid" 2>/dev/null
	fi
	[ "${RS_NETNS:-}" = 1 ] && nft delete table inet "$svc_nft" 2>/dev/null
	rm -rf "$svc_tmp"
}
trap svc_cleanup EXIT
trap 'exit 1' INT TERM

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# svc_exec_as CMD...: replaces the (sub)shell with CMD run as the server's
# user, so that "svc_exec_as CMD &" leaves the server itself in $!.
svc_exec_as() {
	if [ "$(id -u)" = 0 ]; then
		exec setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
	fi
	exec "$@"
}

# svc_as_server CMD...: runs CMD as the server's user and waits for it.
svc_as_server() {
	(svc_exec_as "$@")
}

# svc_port: a TCP port nothing listens on (the namespace is private, but the
# tests also run outside one).
svc_port() {
	p=$((20000 + $$ % 20000))
	while ss -Htln "sport = :$p" 2>/dev/null | grep -q .; do
		p=$((p + 1))
	done
	echo "$p"
}

# svc_launch NAME: starts the server; the test is skipped, and says why,
# if it does not answer.
svc_launch() {
	svc_start
	if ! svc_wait_ready; then
		echo "SKIPPED: $1 did not start: $(tail -1 "$svc_tmp/server.log")"
		exit 0
	fi
	svc_sanitizer_probe
}

# svc_sanitizer_probe: under `make asan` RS_LIB is "RUNTIME LIBRARY"; a
# client that hangs with the sanitizer runtime alone preloaded (psql does,
# at exit) cannot be tested there, with or without resolute: skipped.
svc_sanitizer_probe() {
	case $RS_LIB in
	*" "*) ;;
	*) return 0 ;;
	esac
	LD_PRELOAD="${RS_LIB% *}" timeout -k 2 10 sh "$svc_self" --client query \
	    127.0.0.1 "$port" >/dev/null 2>&1
	[ $? != 124 ] && return 0
	echo "SKIPPED: the $svc_name client hangs with the sanitizer runtime" \
	    "preloaded (without resolute as well)"
	exit 0
}

# svc_wait_ready: waits for the server, at most 30 s; 1 if it never answers.
svc_wait_ready() {
	i=0
	while ! svc_ready >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -gt 300 ] && return 1
		kill -0 "$svc_pid" 2>/dev/null || return 1
		sleep 0.1
	done
}

# svc_stop: stops the server (SIGTERM, then SIGKILL after 10 s).
svc_stop() {
	[ -n "$svc_pid" ] || return 0
	kill -TERM "$svc_pid" 2>/dev/null
	i=0
	while kill -0 "$svc_pid" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -KILL "$svc_pid" 2>/dev/null
	wait "$svc_pid" 2>/dev/null
	svc_pid=""
}

# svc_freeze STOP|CONT: signals the server and its worker processes.
svc_freeze() {
	# shellcheck disable=SC2046 # a list of pids
	kill -"$1" "$svc_pid" $(ps -o pid= --ppid "$svc_pid") 2>/dev/null
}

# Policies: enough attempts and backoff to outlast a 1.5 s restart; two
# short attempts for the blackhole; a read timeout for the frozen server
# and the load run.  Budgets are per process so that tests do not share.
cat >"$svc_tmp/restart.yaml" <<'YAML'
version: 1
defaults:
  connect_timeout: 1s
  attempts: 10
  backoff: {base: 100ms, cap: 500ms, jitter: none}
  retry_budget: {ratio: 1000, min_per_second: 100000, scope: process}
YAML
cat >"$svc_tmp/drop.yaml" <<'YAML'
version: 1
defaults:
  connect_timeout: 500ms
  attempts: 2
  backoff: {base: 100ms, jitter: none}
  retry_budget: {ratio: 1000, min_per_second: 100000, scope: process}
YAML
cat >"$svc_tmp/read.yaml" <<'YAML'
version: 1
defaults:
  read_timeout: 1s
  write_timeout: 1s
  retry_budget: {ratio: 1000, min_per_second: 100000, scope: process}
YAML

svc_pass() {
	svc_passes=$((svc_passes + 1))
	echo "ok    $svc_name $*"
}

svc_fail() {
	svc_fails=$((svc_fails + 1))
	echo "FAIL  $svc_name $*"
	sed 's/^/    | /' "$svc_tmp/out" | tail -8
}

svc_skip() {
	svc_skips="$svc_skips $1"
	echo "skip  $svc_name $1: needs the test namespace (root, nft)"
}

# svc_run BOUND POLICY|- MODE HOST PORT: the client bounded by BOUND seconds,
# under the library with POLICY, or bare ("-"); sets $rc, $ms and leaves the
# output in $svc_tmp/out.  The test re-runs itself in client mode so that
# the bound covers the whole client, pipeline included.
svc_run() {
	run_t0=$(now_ms)
	if [ "$2" = - ]; then
		timeout -k 2 "$1" sh "$svc_self" --client "$3" "$4" "$5" \
		    >"$svc_tmp/out" 2>&1
	else
		timeout -k 2 "$1" env LD_PRELOAD="$RS_LIB" RESOLUTE_POLICY="$2" \
		    RESOLUTE_LOG=warn sh "$svc_self" --client "$3" "$4" "$5" \
		    >"$svc_tmp/out" 2>&1
	fi
	rc=$?
	ms=$(($(now_ms) - run_t0))
}

# svc_block_port / svc_unblock_port: the port refuses (TCP reset) while
# blocked, as a port with nothing listening does.
svc_block_port() {
	nft add table inet "$svc_nft" &&
	    nft add chain inet "$svc_nft" out \
	    '{ type filter hook output priority 0; policy accept; }' &&
	    nft add rule inet "$svc_nft" out tcp dport "$port" reject with tcp reset
}

svc_unblock_port() {
	nft delete table inet "$svc_nft"
}

# svc_unblock_later T0: in the background, opens the port once 1.5 s have
# passed since T0 and the server is ready (a bounded wait of 30 s), and
# writes the time it did into $svc_tmp/opened.
svc_unblock_later() {
	(
		i=0
		while [ $(($(now_ms) - $1)) -lt 1500 ] || ! svc_ready >/dev/null 2>&1; do
			i=$((i + 1))
			[ $i -gt 600 ] && break
			sleep 0.05
		done
		svc_unblock_port
		now_ms >"$svc_tmp/opened"
	) &
	svc_unblocker=$!
}

# svc_case_restart: the server restarts behind a refusing port.  Bare, the
# client is refused at once; under the library it connects once the port
# opens (after 1.5 s and the server ready), within one backoff step.
svc_case_restart() {
	if [ "${RS_NETNS:-}" != 1 ]; then
		svc_skip restart
		return
	fi
	svc_block_port || { svc_fail "restart: nft rule not added"; return; }
	restart_t0=$(now_ms)
	svc_stop
	svc_start
	svc_unblock_later "$restart_t0"
	svc_run 10 - query 127.0.0.1 "$port"
	bare_rc=$rc bare_ms=$ms
	bare_msg=$(grep -Eim1 "$svc_refused_re" "$svc_tmp/out")
	svc_run 20 "$svc_tmp/restart.yaml" query 127.0.0.1 "$port"
	total=$(($(now_ms) - restart_t0))
	wait "$svc_unblocker"
	opened=$(($(cat "$svc_tmp/opened") - restart_t0))
	svc_wait_ready
	echo "      restart: bare exit $bare_rc after $bare_ms ms ($bare_msg);" \
	    "library exit $rc, connected $total ms after the restart began" \
	    "(port open after $opened ms)"
	if [ "$bare_rc" != 0 ] && [ -n "$bare_msg" ] && [ "$bare_ms" -lt 1500 ] &&
	    [ "$rc" = 0 ] && grep -q "$svc_answer" "$svc_tmp/out" &&
	    [ "$total" -ge 1500 ] && [ "$total" -lt $((opened + 500 + SLACK)) ]; then
		svc_pass "restart: refused bare, connected under the library"
	else
		svc_fail "restart: bare exit $bare_rc, library exit $rc after $total ms"
	fi
}

# svc_case_drop: SYNs to 127.0.0.2 are dropped.  Under the library two
# attempts of 500 ms and a wait of 100 ms: a failure after ~1.1 s whose
# message names a timeout (never a reset); bare, still waiting after 5 s.
# A client that connects more than once before it gives up (redis-cli
# does, bare too) sets svc_drop_ms to that many times 1100.
svc_case_drop() {
	if [ "${RS_NETNS:-}" != 1 ]; then
		svc_skip drop
		return
	fi
	svc_run 5 - query 127.0.0.2 "$port"
	bare_rc=$rc bare_ms=$ms
	svc_run 10 "$svc_tmp/drop.yaml" query 127.0.0.2 "$port"
	msg=$(grep -v '^resolute\[' "$svc_tmp/out" |
	    grep -Eim1 "$svc_timeout_re|reset|refused")
	echo "      drop: bare exit $bare_rc after $bare_ms ms (124: still" \
	    "waiting); library exit $rc after $ms ms: $msg"
	if [ "$bare_rc" = 124 ] && [ "$rc" != 0 ] && [ "$rc" != 124 ] &&
	    [ "$ms" -ge "$svc_drop_ms" ] &&
	    [ "$ms" -lt $((svc_drop_ms + SLACK)) ] &&
	    grep -Eqi "$svc_timeout_re" "$svc_tmp/out" &&
	    ! grep -qi 'reset' "$svc_tmp/out"; then
		svc_pass "drop: timed out after $ms ms under the library, hangs bare"
	else
		svc_fail "drop: bare exit $bare_rc, library exit $rc after $ms ms"
	fi
}

# svc_freeze_idle: waits (bounded: 10 s) until the client's session is
# open and idle, then freezes the server and says so in $svc_tmp/frozen.
# The client's handshake must be over first: frozen during it, the client
# times out there instead, before it ever sent its query.  A fixed delay
# (0.5 s, once) was too short for a client started late on a loaded
# machine or under a sanitizer.
svc_freeze_idle() {
	i=0
	while ! svc_idle >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -gt 200 ] && return 1
		sleep 0.05
	done
	svc_freeze STOP
	: >"$svc_tmp/frozen"
}

# svc_frozen_run BOUND POLICY|-: a "late" client with the server frozen
# once its session is idle; the client sends its query after that, and the
# server is thawed once it is done.  Sets $after: the ms from the query to
# the client's end (-1: the server was never frozen).
svc_frozen_run() {
	rm -f "$svc_tmp/frozen" "$svc_tmp/sent"
	svc_freeze_idle &
	freezer=$!
	export svc_sync="$svc_tmp"
	svc_run "$1" "$2" late 127.0.0.1 "$port"
	run_end=$(now_ms)
	unset svc_sync
	kill "$freezer" 2>/dev/null
	wait "$freezer" 2>/dev/null
	svc_freeze CONT
	# The next run must not take this client's session, not yet closed
	# by the thawed server, for its own (bounded: 5 s).
	i=0
	while svc_idle >/dev/null 2>&1 && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	after=-1
	if [ -e "$svc_tmp/frozen" ] && [ -s "$svc_tmp/sent" ]; then
		after=$((run_end - $(cat "$svc_tmp/sent")))
	fi
}

# svc_case_frozen: read_timeout 1 s ends the client 1 s after it sent its
# query to the frozen server; bare it is still waiting after 5 s.
svc_case_frozen() {
	svc_frozen_run 5 -
	bare_rc=$rc bare_ms=$ms bare_after=$after
	svc_frozen_run 10 "$svc_tmp/read.yaml"
	msg=$(grep -v '^resolute\[' "$svc_tmp/out" | grep -Eim1 "$svc_frozen_re")
	echo "      frozen: bare exit $bare_rc after $bare_ms ms (124: still" \
	    "waiting); library exit $rc after $ms ms, $after ms after the" \
	    "query: $msg"
	if [ "$bare_rc" = 124 ] && [ "$bare_after" -ge 0 ] && [ "$rc" != 0 ] &&
	    [ "$rc" != 124 ] && [ "$after" -ge 1000 ] &&
	    [ "$after" -lt $((1000 + SLACK)) ] && [ -n "$msg" ]; then
		svc_pass "frozen: read_timeout ended it $after ms after the query, hangs bare"
	else
		svc_fail "frozen: bare exit $bare_rc (query sent: $bare_after)," \
		    "library exit $rc after $ms ms, $after ms after the query"
	fi
}

# svc_finish: the closing line and the exit status.
svc_finish() {
	echo "$svc_name: $svc_passes passed, $svc_fails failed${svc_skips:+, skipped:$svc_skips}"
	if [ -n "$svc_skips" ] && [ "$svc_fails" = 0 ]; then
		echo "SKIPPED: the restart and drop cases need the test namespace (root, nft)"
	fi
	[ "$svc_fails" = 0 ]
}

# The load runs' policy: timeouts on, long enough that only a real stall
# (no byte for 3 s) ends a connection.
cat >"$svc_tmp/load.yaml" <<'YAML'
version: 1
defaults:
  read_timeout: 3s
  write_timeout: 3s
  retry_budget: {ratio: 1000, min_per_second: 100000, scope: process}
YAML
