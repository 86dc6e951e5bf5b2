#!/bin/sh
# SPDX-License-Identifier: MIT
# test_breaker.sh - the circuit breaker shared across processes (SPEC 12),
# with real processes in the test network namespace.
#
# Addresses on lo, each its own /32, SYNs counted by nftables:
#   127.0.0.31  SYNs dropped (a host that is down), later let through
#   127.0.0.32  SYNs dropped, for the concurrent storm
#   127.0.0.33  the peer answers (a healthy replica)
# Cases: a storm of sequential processes (python3, the C client in its
# blocking, poll, epoll and select modes, curl): SYNs stay at `failures`,
# the rejected fail in milliseconds with the first ones' error; a storm of
# concurrent processes; recovery (one probe, then every connect); a failed
# probe doubles the open period; failover past an open address without a
# connect timeout; scope: process isolates; the compiled-in default has no
# breaker; on_status: [503].  Every command is bounded by timeout(1); the
# whole test takes ~20 s.
# Environment: RS_LIB, RS_BUILD, RS_CLI (set by scripts/run-tests.sh).
set -u
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/../.." || exit 2
RS_BUILD=${RS_BUILD:-$PWD/build}
RS_LIB=${RS_LIB:-$RS_BUILD/libresolute.so}
RS_CLI=${RS_CLI:-$RS_BUILD/resolute}
SLACK=${RS_SLACK_MS:-0}
# shellcheck source=tests/programs/lib.sh
. tests/programs/lib.sh
. tests/programs/sanitizer.sh
fails=0

if [ "${RS_NETNS:-}" != 1 ] || [ "$(id -u)" != 0 ]; then
	echo "SKIPPED: needs the test network namespace (root and nft)"
	exit 0
fi
if [ "${RS_BRK_MNT:-}" != 1 ]; then
	RS_BRK_MNT=1 exec unshare -m sh "$self" "$@"
fi

tmp=$(mktemp -d /tmp/rs-breaker-XXXXXX)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	nft delete table inet rs_breaker 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# A private /dev/shm: the segments of this test's policies are its own.
mount -t tmpfs -o mode=1777,size=16m tmpfs /dev/shm
for a in 31 32 33; do
	ip addr add "127.0.0.$a/32" dev lo
done
nft -f - <<'RULES'
table inet rs_breaker {
	counter syn31 {}
	counter syn32 {}
	chain out {
		type filter hook output priority 0; policy accept;
		ip daddr 127.0.0.31 tcp flags syn counter name syn31 drop comment "down31"
		ip daddr 127.0.0.32 tcp flags syn counter name syn32 drop
	}
}
RULES
syns() {
	nft list counter inet rs_breaker "syn$1" |
	    awk '/packets/ { for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1) }'
}
# Brings 127.0.0.31 back: its drop rule goes, its counting stays.
host_back() {
	h=$(nft -a list chain inet rs_breaker out | awk '/down31/ { print $NF }')
	nft delete rule inet rs_breaker out handle "$h"
	nft add rule inet rs_breaker out ip daddr 127.0.0.31 tcp flags syn counter name syn31
}
printf '127.0.0.1 localhost\n127.0.0.31 two.test\n127.0.0.33 two.test\n' >"$tmp/hosts"
printf 'hosts: files\n' >"$tmp/nsswitch.conf"
mount --bind "$tmp/hosts" /etc/hosts
mount --bind "$tmp/nsswitch.conf" /etc/nsswitch.conf

# The peer answers HTTP on every address (0.0.0.0): 127.0.0.31 is down
# only while its SYNs are dropped.
"$RS_BUILD/itests/peer" http -h 0.0.0.0 -l 120000 >"$tmp/port" &
pids="$pids $!"
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
port=$(cat "$tmp/port")
[ -n "$port" ] || { echo "FAIL  the peer did not start"; exit 1; }

# The python3 client: connects to the first address of HOST, prints
# "ok MS" or "ERRNAME MS" (the connect's own time).
cat >"$tmp/c.py" <<'PY'
import errno, socket, sys, time
host, port = sys.argv[1], int(sys.argv[2])
ai = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_STREAM)
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t = time.monotonic()
try:
    s.connect(ai[0][4])
    r = "ok"
except OSError as e:
    r = errno.errorcode.get(e.errno, str(e.errno))
print(r, int((time.monotonic() - t) * 1000), s.getpeername()[0] if r == "ok" else "-")
PY

# policy NAME BREAKER-LINES...: writes $tmp/NAME.yaml, attempts 2 of
# 300 ms, a short fixed backoff, a budget that never limits.
policy() {
	f=$tmp/$1.yaml
	shift
	printf 'version: 1\ndefaults:\n  connect_timeout: 300ms\n  attempts: 2\n  backoff: {base: 50ms, jitter: none}\n  retry_budget: {ratio: 1000, min_per_second: 100000}\n' >"$f"
	for l in "$@"; do printf '%s\n' "$l" >>"$f"; done
}
# py POLICY HOST: one python3 process; its line in $r, log appended.
py() {
	r=$(LD_PRELOAD="$RS_LIB" RESOLUTE_POLICY="$tmp/$1.yaml" \
	    RESOLUTE_LOG=info RESOLUTE_LOG_FILE="$tmp/$1.log" \
	    timeout 10 python3 "$tmp/c.py" "$2" "$port" 2>&1)
}
# c POLICY ADDR STEPS...: the C client; its first line in $r.
c() {
	pol=$1 addr=$2
	shift 2
	r=$(LD_PRELOAD="$RS_LIB" RESOLUTE_POLICY="$tmp/$pol.yaml" \
	    RESOLUTE_LOG=info RESOLUTE_LOG_FILE="$tmp/$pol.log" \
	    timeout 10 "$RS_BUILD/itests/rsclient" "$addr" "$port" "$@" 2>&1 |
	    head -n 2 | tr '\n' ' ')
}

# --- 1. A sequential storm: 15 processes, failures 2 -----------------------
policy storm '  breaker: {failures: 2, open_for: 60s}'
t0=$(now_ms)
py storm 127.0.0.31
first=$r
slow=0 fast=0 same=0 n=1
for i in 1 2 3 4 5 6 7 8 9; do
	py storm 127.0.0.31
	n=$((n + 1))
	set -- $r
	[ "$1" = ETIMEDOUT ] && same=$((same + 1))
	if [ "$2" -lt $((100 + SLACK)) ]; then fast=$((fast + 1)); else slow=$((slow + 1)); fi
done
# The C client's waits: blocking, poll, epoll, select; and curl.
for steps in connect "nbconnect poll:2000 soerror" \
    "nbconnect epoll:2000 soerror" "nbconnect select:2000 soerror"; do
	# shellcheck disable=SC2086
	c storm 127.0.0.31 $steps
	n=$((n + 1))
	case $r in *ETIMEDOUT*) same=$((same + 1)) ;; esac
done
ct=$(now_ms)
crc=skip
if usable curl --version >/dev/null; then
	LD_PRELOAD="$RS_LIB" RESOLUTE_POLICY="$tmp/storm.yaml" RESOLUTE_LOG=error timeout 10 \
	    curl -s -o /dev/null "http://127.0.0.31:$port/"
	crc=$?
	n=$((n + 1))
fi
ct=$(($(now_ms) - ct))
total=$(($(now_ms) - t0))
s31=$(syns 31)
echo "note  storm: $n processes, $s31 SYNs, $total ms (first: $first)"
case $first in ETIMEDOUT\ *) ok "storm: the first process timed out" ;;
*) fail "storm: the first process: $first" ;; esac
[ "$s31" = 2 ] && ok "storm: SYNs stayed at failures (2)" ||
	fail "storm: $s31 SYNs for $n processes, expected 2"
[ "$fast" = 9 ] && ok "storm: 9 python3 processes rejected in < 100 ms each" ||
	fail "storm: $fast fast, $slow slow"
[ "$same" = 13 ] && ok "storm: every rejected process got ETIMEDOUT" ||
	fail "storm: $same of 13 got ETIMEDOUT"
if [ "$crc" = skip ]; then
	echo "skip  storm: curl does not start with the sanitizer runtime preloaded (bare as well)"
else
	[ "$crc" = 28 ] || [ "$crc" = 7 ] && [ "$ct" -lt $((1000 + SLACK)) ] &&
		ok "storm: curl failed at once (exit $crc, $ct ms)" ||
		fail "storm: curl exit $crc in $ct ms"
fi
[ "$(grep -c 'event=breaker_open\|breaker open' "$tmp/storm.log")" -ge 2 ] &&
	ok "storm: breaker_open logged" || fail "storm: no breaker_open line"
"$RS_CLI" stats --policy "$tmp/storm.yaml" >"$tmp/stats.txt" 2>&1
grep -q "127.0.0.31:$port" "$tmp/stats.txt" && grep -q "open" "$tmp/stats.txt" &&
	ok "storm: resolute stats lists the open breaker" ||
	fail "storm: stats: $(cat "$tmp/stats.txt")"
"$RS_CLI" stats --policy "$tmp/storm.yaml" --format prometheus >"$tmp/prom" 2>&1
grep -q "^resolute_breaker_open{policy=\".*\",rule=\"defaults\",addr=\"127.0.0.31:$port\"} 1$" "$tmp/prom" &&
	grep -q '^resolute_breaker_opens_total{.*rule="defaults"} 1$' "$tmp/prom" &&
	grep -q '^resolute_breaker_rejects_total{.*rule="defaults"} 1[0-9]$' "$tmp/prom" &&
	ok "storm: Prometheus breaker series" ||
	fail "storm: prometheus: $(grep breaker "$tmp/prom")"
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <"$tmp/prom" >/dev/null 2>&1 &&
		ok "storm: promtool accepts the metrics" ||
		fail "storm: promtool: $(promtool check metrics <"$tmp/prom" 2>&1)"
fi
"$RS_CLI" explain --policy "$tmp/storm.yaml" "127.0.0.31:$port" >"$tmp/explain" 2>&1
grep -q "breaker.failures *2" "$tmp/explain" && grep -q "live: 127.0.0.31:$port open" "$tmp/explain" &&
	ok "storm: explain shows the settings and the open state" ||
	fail "storm: explain: $(sed -n '/^breaker/,$p' "$tmp/explain")"

# --- 2. A concurrent storm: 8 processes at once, then 8 more ---------------
policy conc '  breaker: {failures: 2, open_for: 60s}'
wave() {
	wpids=""
	for i in 1 2 3 4 5 6 7 8; do
		LD_PRELOAD="$RS_LIB" RESOLUTE_POLICY="$tmp/conc.yaml" \
		    RESOLUTE_LOG=error timeout 10 python3 "$tmp/c.py" 127.0.0.32 "$port" \
		    >"$tmp/conc.$1.$i" 2>&1 &
		wpids="$wpids $!"
	done
	for p in $wpids; do wait "$p"; done
}
wave 1
s1=$(syns 32)
wave 2
s2=$(syns 32)
slow2=$(cat "$tmp"/conc.2.* | awk -v lim=$((100 + SLACK)) '$1 != "ETIMEDOUT" || $2 >= lim' | wc -l)
echo "note  concurrent: wave 1 sent $s1 SYNs, wave 2 $((s2 - s1))"
[ "$s1" -le 16 ] && [ "$s2" = "$s1" ] && [ "$slow2" = 0 ] &&
	ok "concurrent: the second wave of 8 sent no SYN and failed at once" ||
	fail "concurrent: SYNs $s1 then $s2, $slow2 slow or wrong in wave 2"

# --- 3. Recovery and a failed probe ----------------------------------------
policy rec '  breaker: {failures: 2, open_for: 1s, max_open_for: 10s}'
py rec 127.0.0.31
b0=$(syns 31)
# A failed probe: after the period (0.9-1.1 s) one probe SYN, reopened for
# 1.8-2.2 s; processes meanwhile are rejected.
sleep 1.2
py rec 127.0.0.31
probe=$r
probe_end=$(now_ms)
b1=$(syns 31)
py rec 127.0.0.31
after=$r
b2=$(syns 31)
reopen=$(grep 'breaker open again' "$tmp/rec.log" | sed -n 's/.* for \([0-9]*\) ms.*/\1/p' | tail -n 1)
case $probe in ETIMEDOUT\ *) ok "probe: a probe to the dead host failed ($probe)" ;;
*) fail "probe: $probe" ;; esac
set -- $after
[ "$((b1 - b0))" = 1 ] && [ "$b2" = "$b1" ] && [ "$1" = ETIMEDOUT ] &&
	[ "$2" -lt $((100 + SLACK)) ] &&
	ok "probe: exactly one probe SYN; the next process rejected ($after)" ||
	fail "probe: SYNs $b0 -> $b1 -> $b2, next process: $after"
[ -n "$reopen" ] && [ "$reopen" -ge 1750 ] && [ "$reopen" -le 2250 ] &&
	ok "probe: reopened for twice the period ($reopen ms)" ||
	fail "probe: reopened for '$reopen' ms"
# The host comes back: rejected until the period ends, then one probe
# connects and every process after it.
host_back
back=$(now_ms)
first_ok="" rejected=0 bad=0 after_ok=0
i=0
while [ $i -lt 60 ]; do
	py rec 127.0.0.31
	echo "$r" >>"$tmp/rec.out"
	set -- $r
	if [ "$1" = ok ]; then
		[ -z "$first_ok" ] && first_ok=$(($(now_ms) - back))
	elif [ -n "$first_ok" ]; then
		bad=$((bad + 1))
	else
		rejected=$((rejected + 1))
	fi
	[ -n "$first_ok" ] && after_ok=$((after_ok + 1))
	[ "$after_ok" -ge 5 ] && break
	i=$((i + 1))
	sleep 0.05
done
echo "note  recovery: first connect $first_ok ms after the host came back ($rejected rejected before)"
# Rejected until the reopened period (1.8-2.2 s from the failed probe)
# ends, then the probe and all after it connect.  Where the processes
# start slowly (a sanitizer runtime, a loaded machine) the period may have
# run out before the first one connects: then none is rejected, and the
# first success must simply not come before the period's end.
left=$((${reopen:-0} - (back - probe_end)))
[ -n "$first_ok" ] && [ "$first_ok" -le $((3000 + SLACK)) ] &&
	{ [ "$rejected" -ge 1 ] || [ "$first_ok" -ge "$left" ]; } && [ "$bad" = 0 ] &&
	ok "recovery: one probe, then every process connects" ||
	fail "recovery: first ok '$first_ok' ms, $bad failures after it: $(sort "$tmp/rec.out" | uniq -c | head -5)"
grep -q 'breaker closed' "$tmp/rec.log" && ok "recovery: breaker_close logged" ||
	fail "recovery: no breaker_close line"

# --- 4. Failover past an open address -------------------------------------
host_down() {
	nft delete table inet rs_breaker
	nft -f - <<'RULES'
table inet rs_breaker {
	counter syn31 {}
	counter syn32 {}
	chain out {
		type filter hook output priority 0; policy accept;
		ip daddr 127.0.0.31 tcp flags syn counter name syn31 drop comment "down31"
		ip daddr 127.0.0.32 tcp flags syn counter name syn32 drop
	}
}
RULES
}
host_down
policy fo '  breaker: {failures: 1, open_for: 60s}'
py fo two.test
fo1=$r
slowfo=0
for i in 1 2 3 4 5; do
	py fo two.test
	set -- $r
	{ [ "$1" = ok ] && [ "$3" = 127.0.0.33 ] && [ "$2" -lt $((100 + SLACK)) ]; } ||
		slowfo=$((slowfo + 1))
done
echo "note  failover: first process $fo1; then 5 processes, $slowfo slow"
case $fo1 in "ok "*" 127.0.0.33") ok "failover: the first process reached .33 after a timeout" ;;
*) fail "failover: first $fo1" ;; esac
[ "$slowfo" = 0 ] && [ "$(syns 31)" = 1 ] &&
	ok "failover: then straight to the healthy address, no SYN to the dead one" ||
	fail "failover: $slowfo slow, $(syns 31) SYNs to .31"

# --- 5. scope: process isolates --------------------------------------------
policy proc '  breaker: {failures: 2, open_for: 60s, scope: process}'
s0=$(syns 32)
c proc 127.0.0.32 connect connect
sa=$(syns 32)
py proc 127.0.0.32
s_b=$(syns 32)
set -- $r
[ "$((sa - s0))" = 2 ] && [ "$((s_b - sa))" = 2 ] && [ "$2" -ge 250 ] &&
	ok "scope process: a second process pays its own attempts" ||
	fail "scope process: SYNs $s0 -> $sa -> $s_b, second: $r"

# --- 6. The compiled-in default has no breaker -----------------------------
LD_PRELOAD="$RS_LIB" RESOLUTE_LOG=info RESOLUTE_LOG_FILE="$tmp/def.log" \
    timeout 20 python3 -c '
import socket
for i in range(6):
    s = socket.socket()
    try:
        s.connect(("127.0.0.1", 1))
    except OSError:
        pass
    s.close()
'
grep -v summary "$tmp/def.log" | grep -q 'breaker' &&
	fail "default: a breaker acted: $(grep breaker "$tmp/def.log")" ||
	{ grep -q 'connects=6 connect_attempts=18' "$tmp/def.log" &&
	  ok "default: six refused connects, 18 attempts, no breaker"; } ||
	fail "default: $(grep summary "$tmp/def.log")"

# --- 7. on_status: [503] ---------------------------------------------------
python3 tests/programs/http_server.py --port-file "$tmp/hport" --lifetime 60 \
    >/dev/null 2>&1 &
pids="$pids $!"
i=0
while [ ! -s "$tmp/hport" ] && [ $i -lt 250 ]; do sleep 0.02; i=$((i + 1)); done
hport=$(cat "$tmp/hport")
cat >"$tmp/st.yaml" <<EOF
version: 1
hosts:
  - match: 127.0.0.1:$hport
    http: {retry_on_status: []}
    breaker: {failures: 2, open_for: 1s, on_status: [503]}
EOF
curl_st() {
	LD_PRELOAD="$RS_LIB" RESOLUTE_POLICY="$tmp/st.yaml" RESOLUTE_LOG=info \
	    RESOLUTE_LOG_FILE="$tmp/st.log" timeout 10 curl -s -o /dev/null \
	    -w '%{http_code}' "http://127.0.0.1:$hport/t/b/503/2/-/close/cl"
}
if ! usable curl --version >/dev/null; then
	echo "skip  on_status: curl does not start with the sanitizer runtime preloaded (bare as well)"
	[ "$fails" -eq 0 ] || exit 1
	echo "breaker ok"
	exit 0
fi
codes="$(curl_st) $(curl_st) $(curl_st)"
count=$(curl -s "http://127.0.0.1:$hport/_stats/b" | python3 -c 'import json,sys; print(json.load(sys.stdin)["count"])')
sleep 1.2
codes="$codes $(curl_st) $(curl_st)"
count2=$(curl -s "http://127.0.0.1:$hport/_stats/b" | python3 -c 'import json,sys; print(json.load(sys.stdin)["count"])')
[ "$codes" = "503 503 000 200 200" ] && [ "$count" = 2 ] && [ "$count2" = 4 ] &&
	ok "on_status: two 503s open it, the third is not sent, a probe's 200 closes it" ||
	fail "on_status: codes $codes, server saw $count then $count2"

[ "$fails" -eq 0 ] || exit 1
echo "breaker ok"
