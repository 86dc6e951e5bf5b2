#!/bin/sh
# SPDX-License-Identifier: MIT
# test_learn.sh - learned latency and `auto` timeouts (SPEC 13) with real
# processes: a server whose answers are delayed log-normally (median
# 10 ms, lognormal_server.py), four client processes of 150 requests each
# under read_timeout: auto, timing their own requests.  Then:
# - `resolute stats` and its Prometheus histogram agree with the clients'
#   own p99 within 25% (promtool checks the exposition when installed);
# - a request the server never answers, in a new process, times out at
#   3 x the learned p99 (a window around it), and under a fresh policy
#   with nothing learned at auto_timeout.max;
# - explain and suggest show values in the same window; suggest's output
#   passes `resolute check`;
# - a numeric read_timeout learns too; what is learned survives the
#   processes' exit; with a 2 s half-life it decays away.
# Each policy file is this test's own, and so is its segment.
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/programs/lib.sh
B=${RS_BUILD:-$PWD/build}
LIB=${RS_LIB:-$B/libresolute.so}
CLI=${RS_CLI:-$B/resolute}
command -v python3 >/dev/null || { echo "SKIPPED: no python3"; exit 0; }
dir=$(mktemp -d /tmp/rs-learn-XXXXXX)
spid=""
fails=0
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	"$CLI" stats --prune >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
slack=${RS_SLACK_MS:-0}

python3 tests/programs/lognormal_server.py "$dir/port" &
spid=$!
for _ in $(seq 50); do [ -s "$dir/port" ] && break; sleep 0.1; done
port=$(cat "$dir/port")

policy() {	# FILE READ_TIMEOUT MAX HALF_LIFE
	cat >"$1" <<-YAML
	version: 1
	defaults:
	  connect_timeout: auto
	  read_timeout: $2
	  auto_timeout:
	    multiplier: 3
	    min: 10ms
	    max: $3
	    samples: 200
	    half_life: $4
	YAML
}
client() {	# POLICY ARGS...
	p=$1
	shift
	LD_PRELOAD="$LIB" RESOLUTE_POLICY="$p" RESOLUTE_LOG=error \
	    python3 tests/programs/latency_client.py "$port" "$@"
}
# The p99 (ms) of the lines of numbers on standard input.
p99() {
	sort -n | awk '{ v[NR] = $1 } END { i = int(NR * 0.99 + 0.999); print v[i] }'
}
within() {	# VALUE LOW HIGH
	awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'
}

# 1. Four processes learn; the clients measure.  A fifth holds a
# connection made before anything was learned (its kernel timer set from
# max), to stall on it afterwards (3.).
policy "$dir/auto.yaml" auto 2s 10m
client "$dir/auto.yaml" hold "$dir/go" >"$dir/held" &
holder=$!
sleep 0.3
pids=""
for i in 1 2 3 4; do
	client "$dir/auto.yaml" 150 >"$dir/c$i" &
	pids="$pids $!"
done
for p in $pids; do wait "$p" || fail "client $p failed"; done
measured=$(cat "$dir"/c* | p99)
"$CLI" stats --policy "$dir/auto.yaml" >"$dir/stats" || fail "stats failed"
learned=$(awk '$1 == "read" { for (i = 1; i < NF; i++) if ($i == "p99") print $(i + 1) }' "$dir/stats")
samples=$(awk '$1 == "read" { print $2 }' "$dir/stats")
# Times read as times: a sub-millisecond sample (loopback connects) is
# "<1 ms", not "0 us" (samples are whole milliseconds); never "1e+03".
if grep -Eq ' 0 us|e[+]' "$dir/stats"; then
	fail "stats prints a time as '0 us' or with an exponent: $(grep -E ' 0 us|e[+]' "$dir/stats")"
fi
[ "${samples:-0}" -ge 600 ] || fail "600 requests, $samples samples"
# connect_timeout: auto learns connects: the five clients' own.
cs=$(awk '$1 == "connect" { print $2 }' "$dir/stats")
[ "${cs:-0}" -ge 5 ] || fail "5 connects, ${cs:-no} connect samples"
lo=$(awk -v m="$measured" 'BEGIN { print m * 0.75 }')
hi=$(awk -v m="$measured" 'BEGIN { print m * 1.25 }')
if within "$learned" "$lo" "$hi"; then
	ok "learned p99 $learned ms, clients measured $measured ms"
else
	fail "learned p99 $learned ms, clients measured $measured ms"
fi
# The Prometheus histogram: its quantile by the buckets agrees too.
"$CLI" stats --policy "$dir/auto.yaml" --format prometheus >"$dir/prom"
count=$(awk '/^resolute_read_wait_seconds_count/ { print $2 }' "$dir/prom")
[ "$count" = "$samples" ] || fail "_count $count, $samples samples"
grep -q '^resolute_read_wait_seconds_bucket{.*rule="defaults",le="0.05"}' "$dir/prom" ||
	fail "no le=0.05 bucket"
le=$(awk -v n="$count" '/^resolute_read_wait_seconds_bucket/ {
	v = substr($1, index($1, ",le=") + 5); sub(/".*/, "", v);
	if ($2 >= 0.99 * n && !done) { print v * 1000; done = 1 } }' "$dir/prom")
within "$le" "$measured" 100 || fail "the p99's bucket bound $le ms (measured $measured)"
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <"$dir/prom" || fail "promtool check metrics failed"
fi
want=$(awk -v p="$learned" 'BEGIN { print 3 * p }')

# 2. A stalled request in a new process: 3 x p99.
out=$(client "$dir/auto.yaml" stall)
t=$(echo "$out" | awk '{ print $2 }')
case $out in *ETIMEDOUT*) ;; *) fail "stall: $out" ;; esac
if within "$t" "$(awk -v w="$want" 'BEGIN { print w * 0.9 }')" \
    "$(awk -v w="$want" -v s="$slack" 'BEGIN { print w * 1.1 + 30 + s }')"; then
	ok "stall after learning timed out at $t ms (auto $want ms)"
else
	fail "stall after learning timed out at $t ms, want ~$want ms"
fi

# 2b. The connection made before learning takes the learned value too.
touch "$dir/go"
wait "$holder"
out=$(cat "$dir/held")
t=$(echo "$out" | awk '{ print $2 }')
if within "$t" "$(awk -v w="$want" 'BEGIN { print w * 0.9 }')" \
    "$(awk -v w="$want" -v s="$slack" 'BEGIN { print w * 1.1 + 30 + s }')"; then
	ok "stall on a connection older than the learning: $t ms"
else
	fail "stall on a connection older than the learning: $out, want ~$want ms"
fi

# 3. explain and suggest show the same value.
"$CLI" explain --policy "$dir/auto.yaml" "127.0.0.1:$port" >"$dir/explain"
shown=$(awk '$1 == "read_timeout" { print $4 }' "$dir/explain")
within "$shown" "$(awk -v w="$want" 'BEGIN { print w - 3 }')" \
    "$(awk -v w="$want" 'BEGIN { print w + 3 }')" ||
	fail "explain shows $shown ms, want $want: $(grep read_timeout "$dir/explain")"
grep -q "read_timeout.*auto = .* (3 x p99 .* samples)" "$dir/explain" ||
	fail "explain: $(grep read_timeout "$dir/explain")"
grep -q "connect_timeout.*auto = 2000 ms (max: .* of 200 samples learned)" "$dir/explain" ||
	fail "explain: $(grep connect_timeout "$dir/explain")"
"$CLI" suggest --policy "$dir/auto.yaml" >"$dir/suggested.yaml" || fail "suggest failed"
"$CLI" check "$dir/suggested.yaml" >/dev/null || fail "suggest's output fails check"
sv=$(awk '$1 == "read_timeout:" { print $2 }' "$dir/suggested.yaml")
case $sv in *ms) sv=${sv%ms} ;; *s) sv=$(awk -v s="${sv%s}" 'BEGIN { print s * 1000 }') ;; esac
within "$sv" "$want" "$(awk -v w="$want" 'BEGIN { print w * 1.1 + 1 }')" ||
	fail "suggest: read_timeout $sv ms, want >= $want"
grep -q "read_timeout: .*# resolute suggest: 3 x p99 .* samples since" "$dir/suggested.yaml" ||
	fail "suggest's evidence: $(grep read_timeout "$dir/suggested.yaml")"
grep -q "connect_timeout: auto  # resolute suggest: kept; .* more needed" "$dir/suggested.yaml" ||
	fail "suggest kept connect_timeout: $(grep connect_timeout "$dir/suggested.yaml")"
ok "explain $shown ms, suggest $sv ms"

# 4. Before learning (a new policy, a new segment): max, 400 ms.
policy "$dir/fresh.yaml" auto 400ms 10m
out=$(client "$dir/fresh.yaml" stall)
t=$(echo "$out" | awk '{ print $2 }')
if within "$t" 400 "$((440 + slack))"; then
	ok "stall before learning timed out at $t ms (max 400 ms)"
else
	fail "stall before learning: $out, want 400 ms"
fi

# 5. A numeric read_timeout learns too; a 2 s half-life decays.
policy "$dir/fixed.yaml" 5s 30s 2s
client "$dir/fixed.yaml" 60 >/dev/null
"$CLI" stats --policy "$dir/fixed.yaml" >"$dir/stats2"
n=$(awk '$1 == "read" { print $2 }' "$dir/stats2")
# Weighed by age (the 2 s epochs may turn meanwhile), and all counted.
[ "${n:-0}" -ge 30 ] || fail "read_timeout 5s learned ${n:-no} samples of 60"
c=$("$CLI" stats --policy "$dir/fixed.yaml" --format prometheus |
	awk '/^resolute_read_wait_seconds_count/ { print $2 }')
[ "$c" = 60 ] || fail "read_timeout 5s: _count $c, not 60"
sleep 4.2
"$CLI" stats --policy "$dir/fixed.yaml" >"$dir/stats3"
n2=$(awk '$1 == "read" { print $2 }' "$dir/stats3")
[ -z "$n2" ] || [ "${n2:-0}" -eq 0 ] || fail "after two half-lives: $n2 samples left"
ok "numeric read_timeout learned $n samples, decayed to ${n2:-0}"

[ "$fails" -eq 0 ] || exit 1
echo "learn ok"
