#!/bin/sh
# SPDX-License-Identifier: MIT
# test_failover.sh - failover across a name's addresses (SPEC 5c) with real
# clients that use only the first address they get.
#
# In the test network namespace and a private mount namespace, /etc/hosts
# (bind-mounted) gives three.test three addresses, each its own /32 on lo
# so that getaddrinfo's RFC 6724 sort keeps the file's order:
#   127.0.0.21  SYNs dropped (nftables): a host that is down
#   127.0.0.22  nothing listens: refused
#   127.0.0.23  the peer answers HTTP
# Each client -- gethostbyname()+h_addr_list[0], getaddrinfo()'s first
# result, a program looping over the results itself, curl, wget, python3
# (blocking and asyncio), node and Java -- is run bare (bounded by 5 s),
# under the library (connect_timeout 500ms, 3 attempts, waits of 100 and
# 200 ms: the healthy address on the third attempt, ~800 ms) and with
# `failover: off` (three timeouts on the first address, ~1.8 s).  Then:
# the order and round-robin of the addresses tried, a repeated connect
# skipping the address that failed, v4-mapped addresses on an AF_INET6
# socket, IPV6_V6ONLY, AF_INET sockets never sent to IPv6 addresses.
# Every command is bounded by timeout(1); the whole test takes ~40 s.
# Environment: RS_LIB, RS_BUILD (set by scripts/run-tests.sh), RS_NETNS.
set -u
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/../.." || exit 2
RS_BUILD=${RS_BUILD:-$PWD/build}
RS_LIB=${RS_LIB:-$RS_BUILD/libresolute.so}
SLACK=$((300 + ${RS_SLACK_MS:-0}))
# shellcheck source=tests/programs/sanitizer.sh
. tests/programs/sanitizer.sh
# shellcheck source=tests/programs/fo_clients.sh
. tests/programs/fo_clients.sh

if [ "${1:-}" = --client ]; then
	FO_JAVA_DIR=$2
	shift 2
	fo_client "$@"
	exit
fi
# --bare DIR CLIENT NAME PORT: the client bare, bounded by 5 s; writes
# "EXIT MS" to DIR/bare.CLIENT (run in the background, several at once).
if [ "${1:-}" = --bare ]; then
	t0=$(fo_now_ms)
	timeout 5 sh "$self" --client "$2" "$3" "$4" "$5" \
	    >"$2/out.$3.bare" 2>&1
	echo "$? $(($(fo_now_ms) - t0))" >"$2/bare.$3"
	exit 0
fi
if [ "${RS_NETNS:-}" != 1 ] || [ "$(id -u)" != 0 ]; then
	echo "SKIPPED: needs the test network namespace (root and nft)"
	exit 0
fi
if [ "${RS_FO_MNT:-}" != 1 ]; then
	RS_FO_MNT=1 exec unshare -m sh "$self" "$@"
fi

tmp=$(mktemp -d /tmp/rs-failover-XXXXXX)
peer_pid=""
cleanup() {
	[ -n "$peer_pid" ] && kill "$peer_pid" 2>/dev/null
	nft delete table inet rs_failover 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

for a in 21 22 23; do
	ip addr add "127.0.0.$a/32" dev lo
done
ip -6 addr add fd00::21/128 dev lo nodad
nft -f - <<'RULES'
table inet rs_failover {
	chain out {
		type filter hook output priority 0; policy accept;
		ip daddr 127.0.0.21 tcp flags syn drop
		ip6 daddr fd00::21 tcp flags syn drop
	}
}
RULES
cat >"$tmp/hosts" <<'EOF_HOSTS'
127.0.0.1 localhost
127.0.0.21 three.test
127.0.0.22 three.test
127.0.0.23 three.test
127.0.0.23 wrap.test
127.0.0.21 wrap.test
127.0.0.22 wrap.test
127.0.0.23 first.test
127.0.0.21 first.test
fd00::21 mix.test
127.0.0.23 mix.test
127.0.0.21 v4only.test
fd00::21 v4only.test
EOF_HOSTS
printf 'hosts: files\n' >"$tmp/nsswitch.conf"
mount --bind "$tmp/hosts" /etc/hosts
mount --bind "$tmp/nsswitch.conf" /etc/nsswitch.conf

"$RS_BUILD/itests/peer" http -h 127.0.0.23 -l 120000 >"$tmp/port" &
peer_pid=$!
# Bounded: 10 s, and checked (an empty port made every case fail without
# saying why).
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 500 ]; do
	sleep 0.02
	i=$((i + 1))
done
port=$(cat "$tmp/port")
[ -n "$port" ] || { echo "FAIL  the peer did not start"; exit 1; }
fo_build_java "$tmp" || echo "note: javac not available, Java skipped"

common='  connect_timeout: 500ms
  attempts: 3
  backoff: {base: 100ms, jitter: none}
  retry_budget: {ratio: 1000, min_per_second: 100000}'
printf 'version: 1\ndefaults:\n%s\n' "$common" >"$tmp/on.yaml"
printf 'version: 1\ndefaults:\n%s\n  failover: off\n' "$common" >"$tmp/off.yaml"

# run MODE CLIENT NAME [LIMIT_S]: MODE is bare, on or off (the policy);
# output in $tmp/out.CLIENT.MODE, log in $tmp/log.CLIENT.MODE; sets rc and
# ms (from the client's "start" line, else from before it started).
run() {
	out=$tmp/out.$2.$1 log=$tmp/log.$2.$1
	: >"$log"
	t0=$(fo_now_ms)
	if [ "$1" = bare ]; then
		timeout "${4:-5}" sh "$self" --client "$tmp" "$2" "$3" "$port" \
		    >"$out" 2>&1
	else
		LD_PRELOAD="$RS_LIB" RESOLUTE_POLICY="$tmp/$1.yaml" \
		    RESOLUTE_LOG=info RESOLUTE_LOG_FILE="$log" \
		    timeout "${4:-8}" sh "$self" --client "$tmp" "$2" "$3" \
		    "$port" >"$out" 2>&1
	fi
	rc=$?
	t1=$(fo_now_ms)
	ms=$((t1 - $(fo_start_ms "$out" "$t0")))
}

# stays LOG: whether every attempt logged went to the address of the
# first attempt of its connect (failover: off).
stays() {
	sed -n 's|.*connect [^ ]* (\([^)]*\)) .*attempt \([0-9]*\)/.*|\2 \1|p' \
	    "$1" | awk '$1 == 1 { a = $2; next } $2 != a { bad = 1 }
	    END { exit bad }'
}

# tried LOG: the addresses of the attempts logged, in order, one line.
tried() {
	sed -n 's/.*connect [^ ]* (\([^)]*\)) .*/\1/p' "$1" | tr '\n' ' '
}

bare_pids=""
# Bare first, all clients at once (each hangs or fails on its own): the
# time each takes to reach the healthy address, if it does within 5 s.
for c in ${FO_ONLY:-$FO_CLIENTS}; do
	fo_available "$c" || continue
	sh "$self" --bare "$tmp" "$c" three.test "$port" &
	bare_pids="$bare_pids $!"
done
# shellcheck disable=SC2086 # one pid per word
wait $bare_pids
for c in ${FO_ONLY:-$FO_CLIENTS}; do
	if ! fo_available "$c"; then
		echo "skip  $c: not available here"
		continue
	fi
	read -r brc bms <"$tmp/bare.$c"
	# The client's own time, just before, under the same policy and timed
	# the same way (run: from its "start" line when it prints one):
	# first.test's first address answers, so nothing is retried.  Under
	# ASan on a busy machine an interpreter's start-up alone can take
	# seconds, which are not the library's.
	run on "$c" first.test
	base=$ms
	run on "$c" three.test
	order=$(tried "$log" | sed 's/\[::ffff:\([0-9.]*\)\]/\1/g')
	# 800 ms at least when the library tried all three (node gives up on
	# an attempt after 250 ms by itself and connects the next address).
	low=0
	[ "${order%% *}" = 127.0.0.21 ] && low=800
	if [ "$rc" = 0 ] && [ "$ms" -ge $low ] &&
	    [ "$ms" -lt $((base + 800 + 2000 + SLACK)) ] &&
	    [ "$(echo "$order" | awk '{print $NF}')" = 127.0.0.23 ]; then
		pass "$c: healthy address reached in $ms ms (tried $order)" \
		    "(start-up $base ms; bare: exit $brc after $bms ms)"
	else
		fail "$c: exit $rc after $ms ms (start-up $base ms), tried: $order" \
		    "$out" "$log"
	fi
	run off "$c" three.test
	order=$(tried "$log")
	if [ -n "$order" ] && stays "$log"; then
		pass "$c: failover: off keeps each connect on its address" \
		    "(exit $rc after $ms ms, tried $order)"
	else
		fail "$c: failover: off: exit $rc after $ms ms, tried: $order" \
		    "$out" "$log"
	fi
done

# fo NAME ARGS...: fo_client under the library (policy on.yaml), bounded;
# output in $tmp/fo.out, log in $tmp/fo.log; sets rc and the tried list.
fo() {
	: >"$tmp/fo.log"
	LD_PRELOAD="$RS_LIB" RESOLUTE_POLICY="$tmp/on.yaml" RESOLUTE_LOG=info \
	    RESOLUTE_LOG_FILE="$tmp/fo.log" timeout 8 \
	    "$RS_BUILD/itests/fo_client" "$@" >"$tmp/fo.out" 2>&1
	rc=$?
	order=$(tried "$tmp/fo.log")
}

# expect WHAT RC ORDER PEER: checks the last fo run.
expect() {
	peer=$(sed -n 's/^peer \([^ ]*\) .*/\1/p' "$tmp/fo.out" | tail -1)
	if [ "$rc" = "$2" ] && [ "$order" = "$3" ] && [ "$peer" = "$4" ]; then
		pass "$1: tried $order-> ${4:-no connection}"
	else
		fail "$1: exit $rc (want $2), tried '$order' (want '$3')," \
		    "peer '$peer' (want '$4')" "$tmp/fo.out" "$tmp/fo.log"
	fi
}

fo gai three.test "$port"
expect "order of /etc/hosts" 0 "127.0.0.21 127.0.0.22 127.0.0.23 " 127.0.0.23
fo gai wrap.test "$port" -a 127.0.0.21
expect "round-robin wraps to the first address" 0 \
    "127.0.0.21 127.0.0.22 127.0.0.23 " 127.0.0.23
fo gai first.test "$port"
expect "healthy first address: no retry" 0 "" 127.0.0.23
# The second connect skips 127.0.0.22, refused moments ago.
fo gai three.test "$port" -n 2
expect "recent failure skipped" 0 \
    "127.0.0.21 127.0.0.22 127.0.0.23 127.0.0.21 127.0.0.23 " 127.0.0.23
fo gai mix.test "$port" -a fd00::21 -f 6
expect "AF_INET6 socket: IPv4 address as v4-mapped" 0 \
    "[fd00::21] [::ffff:127.0.0.23] " ::ffff:127.0.0.23
fo gai mix.test "$port" -a fd00::21 -f 6only
expect "IPV6_V6ONLY: IPv6 addresses only" 1 \
    "[fd00::21] [fd00::21] [fd00::21] " ""
fo gai v4only.test "$port" -a 127.0.0.21 -f 4
expect "AF_INET socket: IPv4 addresses only" 1 \
    "127.0.0.21 127.0.0.21 127.0.0.21 " ""

# A program that tries the addresses itself: not slowed down when the
# first one answers, and no slower than bare when it is down.
for name in first.test three.test; do
	run bare c-loop "$name" 8
	b_rc=$rc b_ms=$ms
	run on c-loop "$name"
	if [ "$rc" = 0 ] && [ "$b_rc" = 0 ] && [ "$ms" -le $((b_ms + SLACK)) ]; then
		pass "own address loop, $name: $ms ms (bare $b_ms ms)"
	else
		fail "own address loop, $name: exit $rc after $ms ms" \
		    "(bare: exit $b_rc after $b_ms ms)" "$out" "$log"
	fi
done

# explain lists the addresses in the resolver's order and the attempts.
"${RS_CLI:-$RS_BUILD/resolute}" explain --policy "$tmp/on.yaml" \
    "three.test:$port" >"$tmp/explain.out" 2>&1
if grep -q '^    1  127.0.0.21$' "$tmp/explain.out" &&
    grep -q '^    3  127.0.0.23$' "$tmp/explain.out" &&
    grep -q 'tries, in turn: 127.0.0.21 127.0.0.22 127.0.0.23$' \
    "$tmp/explain.out"; then
	pass "explain shows the addresses and the attempts' order"
else
	fail "explain three.test" "$tmp/explain.out"
fi

echo "$passes passed, $fails failed"
[ $fails = 0 ]
