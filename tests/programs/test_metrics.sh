#!/bin/sh
# SPDX-License-Identifier: MIT
# test_metrics.sh - machine-wide counters (SPEC 11) seen from outside: real
# clients (curl, or python3 where curl cannot start under a sanitizer, and
# python3) run under the library with one policy, each its
# own process; then `resolute stats --format prometheus` must show the sum
# of what they did, per rule, as a valid exposition (promtool when it is
# installed, and this test's own checks of the format in any case), with
# the policy's path escaped in its label (the test's directory has a
# double quote and a backslash in its name).  Also: --output replaces the
# file atomically with mode 0644 less the umask, --format json agrees, a
# planted segment of the previous layout is skipped with a note, never
# read, and bad options are usage errors.
#
# The policy file is this test's own, so the segment is too: other tests
# running at the same time cannot change these counts.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${RS_BUILD:-$PWD/build}
LIB=${RS_LIB:-$B/libresolute.so}
CLI=${RS_CLI:-$B/resolute}
PEER=$B/itests/peer
[ -x "$PEER" ] || { echo "SKIPPED: $PEER not built (make tests)"; exit 0; }
command -v curl >/dev/null || { echo "SKIPPED: no curl"; exit 0; }
command -v python3 >/dev/null || { echo "SKIPPED: no python3"; exit 0; }
base=$(mktemp -d /tmp/rs-metrics-XXXXXX)
dir="$base/q\"b\\s"
mkdir "$dir"
policy="$dir/policy.yaml"
peer_pid=""
fails=0
cleanup() {
	[ -n "$peer_pid" ] && kill "$peer_pid" 2>/dev/null
	[ -n "${seg:-}" ] && rm -f "$seg" "$old"
	rm -rf "$base"
}
trap cleanup EXIT INT TERM

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# A port of 127.0.0.1 where nothing listens: bound, then closed.
refused=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$PEER" http -l 60000 >"$base/port" &
peer_pid=$!
i=0
while [ ! -s "$base/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
port=$(cat "$base/port")
"$PEER" silent -l 60000 >"$base/sport" &
silent_pid=$!
i=0
while [ ! -s "$base/sport" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
sport=$(cat "$base/sport")

cat >"$policy" <<YAML
version: 1
defaults:
  connect_timeout: 1s
  attempts: 3
  backoff: { base: 10ms, cap: 20ms }
  retry_budget: { scope: process }
hosts:
  - match: 127.0.0.1:$refused
    attempts: 4
  - match: 127.0.0.1:$sport
    read_timeout: 200ms
YAML

under() {
	LD_PRELOAD=$LIB RESOLUTE_POLICY=$policy RESOLUTE_LOG=error \
		timeout 20 "$@" >/dev/null 2>&1
}

# shellcheck source=tests/programs/sanitizer.sh
. tests/programs/sanitizer.sh
# get URL: one HTTP GET by curl, or by python3 where curl cannot start
# (under a sanitizer runtime).
if usable curl --version >/dev/null; then
	get() { under curl -sS "$1"; }
else
	get() { under python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=10).read()' "$1"; }
fi

# Three GETs that succeed (defaults), two that give up after 4 attempts
# each (the refused rule), one python3 read that times out (the silent rule).
for _ in 1 2 3; do
	get "http://127.0.0.1:$port/" || fail "GET from the peer failed"
done
for _ in 1 2; do
	get "http://127.0.0.1:$refused/" && fail "GET from a refused port succeeded"
done
under python3 -c "
import socket, sys
s = socket.create_connection(('127.0.0.1', $sport))
try:
    s.recv(10)
except OSError as e:
    sys.exit(0 if e.errno == 110 else 1)
sys.exit(1)" || fail "python3 read did not time out with ETIMEDOUT"
kill "$silent_pid" 2>/dev/null

prom="$base/out.prom"
"$CLI" stats --policy "$policy" --format prometheus >"$prom" 2>"$base/err" ||
	fail "stats --format prometheus exited $?: $(cat "$base/err")"
sed 's/^/    | /' "$prom" | grep -v ' 0$' | grep -v '| #'

# The label value as the exposition format escapes it.
esc=$(printf '%s' "$policy" | sed 's/\\/\\\\/g; s/"/\\"/g')
# value NAME RULE: the sample of that family and rule, or "missing".
value() {
	# Through the environment: awk -v would undo the backslashes.
	WANT="$1{policy=\"$esc\",rule=\"$2\"}" awk \
		'BEGIN { want = ENVIRON["WANT"] }
		substr($0, 1, length(want)) == want && substr($0, length(want) + 1, 1) == " " \
		{ print substr($0, length(want) + 2); found = 1 }
		END { if (!found) print "missing" }' "$prom"
}
expect() {
	got=$(value "$1" "$2")
	[ "$got" = "$3" ] || fail "$1{rule=$2} is $got, expected $3"
}
expect resolute_connects_total defaults 3
expect resolute_connect_attempts_total defaults 3
expect resolute_retries_total defaults 0
expect resolute_connects_total "127.0.0.1:$refused" 2
expect resolute_connect_attempts_total "127.0.0.1:$refused" 8
expect resolute_retries_total "127.0.0.1:$refused" 6
expect resolute_give_ups_total "127.0.0.1:$refused" 2
expect resolute_connects_total "127.0.0.1:$sport" 1
expect resolute_read_timeouts_total "127.0.0.1:$sport" 1
expect resolute_budget_denials_total defaults 0

# The format itself: every family has HELP then TYPE counter (or
# histogram: the learned latency of SPEC 13; gauge: the breakers of SPEC
# 12), once, before its samples, which are contiguous; names and values
# are well formed: a histogram's samples are NAME_bucket with le last,
# NAME_sum (seconds) and NAME_count.
awk '
/^# HELP / { if (help[$3]++) bad = bad " HELP twice: " $3; last = $3; next }
/^# TYPE / { if ($3 != last || ($4 != "counter" && $4 != "histogram" && !($4 == "gauge" && $3 == "resolute_breaker_open"))) bad = bad " TYPE: " $0; typed[$3] = $4; next }
/^#/ { next }
{
	name = $0; sub(/\{.*/, "", name)
	fam = name
	if (typed[last] == "histogram") sub(/_(bucket|sum|count)$/, "", fam)
	if (typed[last] == "counter" && name !~ /^resolute_[a-z_]+_total$/) bad = bad " name: " $0
	if (typed[last] == "histogram" && name !~ /^resolute_[a-z_]+_seconds_(bucket|sum|count)$/) bad = bad " name: " $0
	if (typed[last] == "gauge" && name != "resolute_breaker_open") bad = bad " name: " $0
	if (name ~ /_bucket$/ && $0 !~ /,le="([0-9.]+|\+Inf)"\} /) bad = bad " le: " $0
	if (!typed[fam] || fam != last) bad = bad " sample outside its family: " $0
	if (name ~ /_sum$/ ? $NF !~ /^[0-9]+\.[0-9]+$/ : $NF !~ /^[0-9]+$/) bad = bad " value: " $0
	n++
}
END { if (bad != "") { print bad; exit 1 } if (n < 36) { print "only " n " samples"; exit 1 } }' "$prom" ||
	fail "the exposition is malformed"
families=$(grep -c '^# TYPE ' "$prom")
# One family per counter: the twelve of SPEC 11, the two of SPEC 10
# (inbound_deadlines, deadline_headers) and the two of SPEC 12
# (breaker_opens, breaker_rejects); the two histograms of SPEC 13; and the
# breaker gauge of SPEC 12.
[ "$families" = 19 ] || fail "$families families, expected 19"
# The read that timed out under read_timeout 200ms learned nothing (no
# data ended its wait); the silent rule's connect did.
expect resolute_read_wait_seconds_count "127.0.0.1:$sport" 0
expect resolute_connect_seconds_count "127.0.0.1:$sport" 1
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <"$prom" || fail "promtool check metrics failed"
else
	echo "note: promtool not installed; checked by this test alone"
fi

# --output: replaced atomically (a new inode each time), 0644 less umask.
out="$base/textfile/resolute.prom"
mkdir "$base/textfile"
echo stale >"$out"
ino1=$(stat -c %i "$out")
(umask 027 && "$CLI" stats --policy "$policy" --format prometheus --output "$out") ||
	fail "stats --output failed"
cmp -s "$out" "$prom" || fail "--output wrote something else than stdout"
[ "$(stat -c %a "$out")" = 640 ] || fail "--output mode $(stat -c %a "$out"), expected 640"
[ "$(stat -c %i "$out")" != "$ino1" ] || fail "--output rewrote the file in place"
[ "$(find "$base/textfile" -type f | wc -l)" = 1 ] || fail "--output left a temporary file"
"$CLI" stats --policy "$policy" --output /nonexistent/dir/x.prom 2>/dev/null &&
	fail "--output into a missing directory succeeded"

# JSON agrees.
"$CLI" stats --policy "$policy" --format json >"$base/out.json" || fail "stats --format json failed"
python3 - "$base/out.json" "$policy" "$refused" <<'PY' || fail "JSON output disagrees"
import json, sys
doc = json.load(open(sys.argv[1]))
seg, = doc["segments"]
assert seg["policy"] == sys.argv[2], seg["policy"]
rules = {r["rule"]: r for r in seg["rules"]}
r = rules["127.0.0.1:" + sys.argv[3]]
assert (r["connects"], r["connect_attempts"], r["retries"], r["give_ups"]) == (2, 8, 6, 2), r
assert rules["defaults"]["connects"] == 3
PY

# A segment of the previous layout for this policy (budgets only, no
# suffix in its name): skipped with a note, exit status 0, never shown.
seg=$("$CLI" stats --policy "$policy" | awk '/^  segment / { print $2 }')
old=${seg%-v4}
[ "$old" != "$seg" ] || fail "segment $seg is not named for layout 4"
python3 - "$old" "$policy" <<'PY'
import os, struct, sys
head = struct.pack("<QIIQ", 0x3154454744554252, 1, 256, 24 + 512 + 256 * 280)
head += sys.argv[2].encode().ljust(512, b"\0")
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
os.write(fd, head + b"\1" * (256 * 280))
os.close(fd)
PY
"$CLI" stats --policy "$policy" --format prometheus >"$base/out2.prom" 2>"$base/err" ||
	fail "a layout-1 segment made stats fail"
grep -q "1 segment of another layout" "$base/err" || fail "no note for the layout-1 segment: $(cat "$base/err")"
cmp -s "$base/out2.prom" "$prom" || fail "the layout-1 segment changed the output"

# Usage errors.
"$CLI" stats --format yaml >/dev/null 2>&1
[ $? = 2 ] || fail "--format yaml is not a usage error"
"$CLI" stats --prune --output x >/dev/null 2>&1
[ $? = 2 ] || fail "--prune --output is not a usage error"

[ "$fails" -eq 0 ] || exit 1
echo "metrics ok"
