#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh - the soak (make soak): hours of real traffic under rotating
# faults, with and without the library, and what it must never lose.
#
#   tests/soak/run.sh            SOAK_SECONDS (1800) of traffic
#   SOAK_SECONDS=90 SOAK_FAULT_S=3 tests/soak/run.sh      the CI short form
#
# Everything runs in private PID, network and mount namespaces (unshare;
# root): loopback only, its own DNS server (tests/programs/dnsd.py on
# 127.0.0.53, bind-mounted resolv.conf), its own /dev/shm.  When the soak
# ends, or is killed, the namespace's first process goes and the kernel
# kills every other one; nftables rules and mounts go with the namespaces.
#
# Servers (servers.sh): an echo server and an HTTP server of the soak's
# own (servers.py), Redis and PostgreSQL.  Clients (clients.py, stream.py),
# under the library: a single-threaded blocking process, a 16-thread one,
# an asyncio loop with 200 connections, the chain service (one hop of a
# two-hop deadline chain), and a stream of short-lived curl, python3, psql
# and redis-cli processes with redis-benchmark and pgbench bursts.  Faults
# (faults.sh) rotate every SOAK_FAULT_S (6) + 2 s (the drop and the dead
# address longer); the first cycle of the eight and one in three after it
# is "bare" (SOAK_BARE=0: none): twins of the long-lived clients run
# without the library beside them, and the stream runs bare.  sample.py samples
# descriptors, RSS, epoll records and shared segments every 3 s.
# report.py prints the table, checks what must hold, draws
# SOAK_OUT/soak.svg and exits non-zero when something does not hold.
#
# Environment: SOAK_SECONDS, SOAK_FAULT_S, SOAK_DROP_S, SOAK_DEAD_S,
# SOAK_BARE, SOAK_HUNG_S (15), SOAK_OUT (build/soak), B or
# RS_BUILD (build), SOAK_ASAN=1 (B=build-asan, libasan first in
# LD_PRELOAD, as make asan), SOAK_TLS (auto: an HTTPS port on the web
# server, used by curl in the stream, when the library has its TLS layer;
# 1 always, 0 never).  Without root, nft or
# unshare: SKIPPED, and why.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.." || exit 2
B=${RS_BUILD:-${B:-build}}
case $B in /*) ;; *) B=$PWD/$B ;; esac
SOAK_SECONDS=${SOAK_SECONDS:-1800}
SOAK_FAULT_S=${SOAK_FAULT_S:-6}
SOAK_DROP_S=${SOAK_DROP_S:-10}
SOAK_DEAD_S=${SOAK_DEAD_S:-17}
SOAK_BARE=${SOAK_BARE:-1}
out=${SOAK_OUT:-$B/soak}

if [ "${SOAK_INSIDE:-}" != 1 ]; then
	if [ "$(id -u)" != 0 ] || ! command -v nft >/dev/null ||
	    ! unshare -p -f -n -m true 2>/dev/null; then
		echo "SKIPPED: the soak needs root, nft and unshare (private" \
		    "PID, network and mount namespaces)"
		exit 0
	fi
	[ -f "$B/libresolute.so" ] || { echo "soak: no $B/libresolute.so"; exit 2; }
	rm -rf "$out" && mkdir -p "$out/run/logs" || exit 2
	export SOAK_INSIDE=1 B SOAK_OUT="$out"
	# unshare blocks SIGTERM while it waits for the namespace's first
	# process, so a TERM or INT to this shell is passed on to that
	# process, which cleans up and ends; a SIGKILL to unshare kills it
	# (--kill-child) and with it the whole namespace.
	unshare --pid --fork --kill-child --mount-proc -n -m \
	    sh "$here/run.sh" "$@" &
	upid=$!
	trap 'kill -TERM $(ps -o pid= --ppid "$upid") 2>/dev/null' INT TERM HUP
	status=0
	while kill -0 "$upid" 2>/dev/null; do
		wait "$upid"
		status=$?
	done
	exit "$status"
fi

dir=$out/run
lib=$B/libresolute.so
if [ "${SOAK_ASAN:-}" = 1 ]; then
	lib="$(${CC:-cc} -print-file-name=libasan.so) $lib"
	export ASAN_OPTIONS="detect_leaks=0:verify_asan_link_order=0:log_path=$dir/asan"
	export UBSAN_OPTIONS="print_stacktrace=1:log_path=$dir/ubsan"
fi
export SOAK_LIB="$lib" SOAK_POLICY="$dir/policy.yaml"
export SOAK_ECHO=echo.soak:7001 SOAK_WEB=web.soak:8001 SOAK_WEB2=web.soak:8002
export SOAK_REDIS=redis.soak:6380 SOAK_PG=pg.soak:5433 SOAK_CHAIN=127.0.0.1:8003
export SOAK_HUNG_S=${SOAK_HUNG_S:-15} PYTHONDONTWRITEBYTECODE=1
# TLS (SPEC 9 over TLS): an HTTPS port on the web server and curl over it
# in the stream, when the library has its TLS layer (it exports SSL_write)
# or SOAK_TLS=1 says so; SOAK_TLS=0: never.
SOAK_TLS=${SOAK_TLS:-auto}
if [ "$SOAK_TLS" = auto ]; then
	SOAK_TLS=0
	nm -D --defined-only "$B/libresolute.so" 2>/dev/null |
	    grep -qw SSL_write && SOAK_TLS=1
	[ "$SOAK_TLS" = 1 ] ||
	    echo "soak: HTTPS left out: the library has no TLS layer (SOAK_TLS=1 adds it anyway)"
fi
if [ "$SOAK_TLS" = 1 ]; then
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=web.soak \
	    -addext subjectAltName=DNS:web.soak -keyout "$dir/tls.key" \
	    -out "$dir/tls.crt" >/dev/null 2>&1 ||
	    { echo "soak: openssl req failed"; exit 1; }
	export SOAK_WEBS=web.soak:8443 SOAK_TLS_PORT=8443
	export SOAK_TLS_CERT="$dir/tls.crt" SOAK_TLS_KEY="$dir/tls.key"
fi
pgdir=$(mktemp -d /tmp/rs-soak-pg-XXXXXX)
chmod 0755 "$pgdir"
# shellcheck source=tests/soak/servers.sh
. tests/soak/servers.sh
# shellcheck source=tests/soak/faults.sh
. tests/soak/faults.sh
# shellcheck source=tests/programs/lib.sh
. tests/programs/lib.sh

dnsd_pid="" twins=""
cleanup() {
	trap - EXIT INT TERM
	faults_clear
	# The first process of the PID namespace: -1 is everything else in it.
	kill -TERM -1 2>/dev/null
	sleep 1
	kill -KILL -1 2>/dev/null
	rm -rf "$pgdir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# The namespace: loopback, the names' two addresses, the DNS server's.
mount --make-rprivate /
mount -t tmpfs -o mode=1777,size=64m tmpfs /dev/shm
ip link set lo up
for a in 11 12 53; do
	ip addr add "127.0.0.$a/32" dev lo
done
printf 'nameserver 127.0.0.53\noptions timeout:1 attempts:1\n' >"$dir/resolv.conf"
printf '127.0.0.1 localhost\n' >"$dir/hosts"
printf 'hosts: files dns\n' >"$dir/nsswitch.conf"
for f in resolv.conf hosts nsswitch.conf; do
	mount --bind "$dir/$f" "/etc/$f"
done

sed "s/@P_CHAIN@/$P_CHAIN/" tests/soak/policy.yaml >"$SOAK_POLICY"
set_mode quiet
echo lib >"$dir/phase"
ab=127.0.0.11,127.0.0.12
python3 tests/programs/dnsd.py 127.0.0.53 --fail-ms 2500 \
    --life $((SOAK_SECONDS + 900)) echo.soak=$ab web.soak=$ab \
    redis.soak=$ab pg.soak=$ab >"$dir/dnsd.ready" 2>"$dir/dnsd.log" &
dnsd_pid=$!

srv_init
srv_start_all
if ! srv_wait_ready; then
	echo "FAIL  soak: the servers did not start"
	tail -3 "$dir/servers.log" "$dir/redis.log" "$pgdir/server.log" 2>/dev/null
	exit 1
fi
# dnsd.py fails the first 2.5 s from its first query: spent here.
getent hosts echo.soak >/dev/null
if [ "$have_pg" = 1 ]; then
	timeout 120 pgbench -i -q -s 1 -h 127.0.0.1 -p "$P_PG" -U postgres \
	    postgres >"$dir/pgbench-init.log" 2>&1 ||
	    echo "soak: pgbench -i failed: $(tail -1 "$dir/pgbench-init.log")"
fi
sleep 2.6
[ "$have_redis" = 1 ] || SOAK_REDIS=""
[ "$have_pg" = 1 ] || SOAK_PG=""
export SOAK_HAVE_REDIS=$have_redis SOAK_HAVE_PG=$have_pg

life=$((SOAK_SECONDS + 60))
# under NAME LOG CMD...: CMD with the library, logging to logs/NAME.log.
under() {
	name=$1
	shift
	LD_PRELOAD="$lib" RESOLUTE_POLICY="$SOAK_POLICY" \
	    RESOLUTE_LOG_FORMAT=json RESOLUTE_LOG_FILE="$dir/logs/$name.log" \
	    exec "$@"
}
# long NAME PID: a long-lived process the sampler follows.
long() {
	echo "$1 $2" >>"$dir/pids"
}
(under chain python3 tests/programs/chain_service.py chain "$P_CHAIN" 0 \
    "http://$SOAK_WEB/data/7/5000" "$dir/chain.log") >"$dir/chain.ready" &
long chain $!
for c in single threads async; do
	(under "$c" python3 tests/soak/clients.py "$c" "$c" lib "$dir/ops" \
	    "$life") 2>>"$dir/clients.err" &
	long "$c" $!
done
python3 tests/soak/stream.py "$dir" "$SOAK_SECONDS" >>"$dir/stream.out" \
    2>&1 &
stream_pid=$!
python3 tests/soak/sample.py "$dir" "$B/resolute" "$SOAK_POLICY" "$life" &
sample_pid=$!

# twins_start SECONDS / twins_stop: the bare twins of the long-lived clients.
twins_start() {
	for c in single threads async; do
		python3 tests/soak/clients.py "$c" "$c" bare "$dir/ops" "$1" \
		    2>>"$dir/clients.err" &
		twins="$twins $!"
	done
}
twins_stop() {
	# shellcheck disable=SC2086 # a list of pids
	[ -n "$twins" ] && kill -TERM $twins 2>/dev/null && wait $twins 2>/dev/null
	twins=""
}

# The faults begin once every long-lived client has counted operations
# (bounded: 60 s; python3 under a sanitizer starts in seconds).
i=0
while [ $i -lt 600 ]; do
	n=$(cut -d' ' -f2 "$dir/ops" 2>/dev/null | sort -u | grep -cxE 'single|threads|async')
	[ "$n" = 3 ] && break
	sleep 0.1
	i=$((i + 1))
done
echo "soak: ${SOAK_SECONDS}s of traffic, faults of ${SOAK_FAULT_S}s + 2s," \
    "output in $out"
t_end=$(($(now_ms) + SOAK_SECONDS * 1000))
cycle=0
while [ "$(now_ms)" -lt "$t_end" ]; do
	phase=lib
	[ "$SOAK_BARE" = 1 ] && [ $((cycle % 3)) = 0 ] && phase=bare
	echo "$phase" >"$dir/phase"
	[ "$phase" = bare ] && twins_start \
	    $((6 * (SOAK_FAULT_S + 2) + SOAK_DROP_S + SOAK_DEAD_S + 9))
	for f in $FAULTS; do
		[ "$(now_ms)" -lt "$t_end" ] || break
		t0=$(now_ms)
		fault_on "$f"
		len=$SOAK_FAULT_S
		[ "$f" = drop ] && len=$SOAK_DROP_S
		[ "$f" = dead ] && len=$SOAK_DEAD_S
		left=$((len * 1000 - ($(now_ms) - t0)))
		[ "$left" -gt 0 ] && sleep_ms "$left"
		fault_off "$f"
		sleep_ms 2000
		echo "$t0 $(now_ms) $f $cycle $phase" >>"$dir/faults"
	done
	twins_stop
	cycle=$((cycle + 1))
done
echo lib >"$dir/phase"
faults_clear
faults_check >"$dir/faults-left" 2>&1
# The clients end here: each writes what it counted on SIGTERM.
for p in $(cut -d' ' -f2 "$dir/pids"); do
	[ "$(sed -n 1p "/proc/$p/cmdline" 2>/dev/null | tr '\0' ' ')" ] &&
	    kill -TERM "$p" 2>/dev/null
done
kill -TERM "$stream_pid" "$sample_pid" 2>/dev/null
wait "$stream_pid" 2>/dev/null
sleep 1
"$B/resolute" stats --policy "$SOAK_POLICY" >"$dir/stats.txt" 2>&1
python3 tests/soak/report.py "$dir" "$out" "$SOAK_SECONDS"
