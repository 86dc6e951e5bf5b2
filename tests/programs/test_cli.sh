#!/bin/sh
# SPDX-License-Identifier: MIT
# test_cli.sh - the resolute command: check, explain, run, systemd, version.
#
# Needs RS_CLI (build/resolute); RS_LIB and RS_BUILD as set by
# scripts/run-tests.sh.  Exits 0 when every case passes; prints each
# failure.  Nothing here needs the network or root.
set -u
cd "$(dirname "$0")/../.." || exit 2
CLI=${RS_CLI:-$PWD/build/resolute}
[ -x "$CLI" ] || { echo "FAIL: $CLI is not built"; exit 1; }
unset RESOLUTE_POLICY RESOLUTE_DEADLINE RESOLUTE_LIB RESOLUTE_STRICT \
	RESOLUTE_LOG LD_PRELOAD SYSTEMD_DIR
# A sanitized resolute started with LD_PRELOAD already set would refuse to
# run because libasan is not first; the order does not matter for it here.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0

# These cases are about the environment `run` builds, not the interposer:
# an empty shared object stands in for it, so that the commands run the same
# with a sanitized build (whose library would need libasan preloaded first).
mkdir "$tmp/lib"
LIB="$tmp/lib/libresolute.so"
printf 'int rs_cli_test_empty;\n' >"$tmp/empty.c"
cc -shared -fPIC -o "$LIB" "$tmp/empty.c" 2>/dev/null ||
	LIB=${RS_LIB:-$PWD/build/libresolute.so}

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# expect STATUS COMMAND...: runs COMMAND, output in $tmp/out and $tmp/err.
expect() {
	want=$1
	shift
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq "$want" ] ||
		fail "'$*' exited $rc, expected $want: $(cat "$tmp/out" "$tmp/err")"
}

# has FILE TEXT: FILE ($tmp/out or $tmp/err) contains the fixed string TEXT.
has() {
	grep -qF -- "$2" "$1" || fail "no '$2' in output: $(cat "$1")"
}

# row N TIMEOUT WAIT TOTAL: a line of the backoff schedule table.
row() {
	grep -Eq "^ +$1 +[-0-9]+ +$2 +$3 +$4\$" "$tmp/out" ||
		fail "no schedule row '$1 $2 $3 $4' in: $(cat "$tmp/out")"
}

# --- version, help, usage -------------------------------------------------
version=$(cat VERSION)
expect 0 "$CLI" version
has "$tmp/out" "resolute $version"
expect 0 "$CLI" --version
has "$tmp/out" "resolute $version"
expect 0 "$CLI" help
has "$tmp/out" "usage: resolute"
expect 2 "$CLI"
has "$tmp/err" "usage: resolute"
expect 2 "$CLI" frobnicate

# --- check ----------------------------------------------------------------
expect 2 "$CLI" check
expect 2 "$CLI" check --bogus policy/default.yaml
for f in policy/*.yaml policy/examples/*.yaml; do
	[ -f "$f" ] || continue
	expect 0 "$CLI" check "$f"
	has "$tmp/out" "$f: ok"
done
n=0
for f in tests/fixtures/invalid/*.yaml; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	expect 1 "$CLI" check "$f"
	grep -Eq "^$f:[0-9]+:[0-9]+: error: ." "$tmp/err" ||
		fail "check $f: no FILE:LINE:COL: error: line: $(cat "$tmp/err")"
done
printf 'version: 1\ndefaults:\n  conect_timeout: 1s\n' >"$tmp/typo.yaml"
expect 1 "$CLI" check policy/default.yaml "$tmp/typo.yaml"
has "$tmp/out" "policy/default.yaml: ok"
grep -Eq "^$tmp/typo.yaml:3:3: error: " "$tmp/err" ||
	fail "typo: expected $tmp/typo.yaml:3:3: error:, got $(cat "$tmp/err")"
expect 1 "$CLI" check "$tmp/missing.yaml"
has "$tmp/err" "$tmp/missing.yaml"

# --- explain ----------------------------------------------------------------
# The built-in default: 3s attempts, equal jitter from 100ms, 10s budget.
RESOLUTE_POLICY='' expect 0 "$CLI" explain --policy policy/default.yaml \
	db.internal:5432
has "$tmp/out" "defaults (policy/default.yaml:"
row 1 3s - 3s
row 2 3s 50ms–100ms 6.1s
row 3 3s 100ms–200ms 9.3s
has "$tmp/out" "(defaults)"

cat >"$tmp/p.yaml" <<'YAML'
version: 1
defaults:
  connect_timeout: 1s
  attempts: 10
  connect_budget: off
hosts:
  - match: db.internal:5432
    connect_timeout: 2s
    attempts: 4
    connect_budget: 5s
  - match: 127.0.0.1:9000-9100
    passthrough: true
  - match: unix:/run/app/*.sock
    attempts: 2
YAML
expect 0 "$CLI" explain --policy "$tmp/p.yaml" db.internal:5432
has "$tmp/out" "match: db.internal:5432 ($tmp/p.yaml:7)"
grep -Eq '^ +connect_timeout +2s +\(rule\)$' "$tmp/out" ||
	fail "connect_timeout not marked (rule): $(cat "$tmp/out")"
grep -Eq '^ +backoff.base +100ms +\(defaults\)$' "$tmp/out" ||
	fail "backoff.base not marked (defaults): $(cat "$tmp/out")"
row 2 2s 50ms–100ms 4.1s
has "$tmp/out" "attempt 3 would end after the 5s connect_budget: connect() fails with ETIMEDOUT at 5s"

# Ten attempts without a budget: the SPEC's doubling from 100ms.
expect 0 "$CLI" explain --policy "$tmp/p.yaml" 10.1.2.3:80
row 5 1s 400ms–800ms 6.5s
row 9 1s 6.4s–12.8s 34.5s
row 10 1s 12.8s–25.6s 1m1.1s
sed 's/^  attempts: 10/  attempts: 10\n  backoff: {cap: 20s}/' "$tmp/p.yaml" \
	>"$tmp/cap.yaml"
expect 0 "$CLI" explain --policy "$tmp/cap.yaml" 10.1.2.3:80
row 10 1s 10s–20s 55.5s

expect 0 "$CLI" explain --policy "$tmp/p.yaml" db.internal
has "$tmp/out" "any port"
has "$tmp/out" "match: db.internal:5432 ($tmp/p.yaml:7) would apply on its ports"

expect 0 "$CLI" explain --policy "$tmp/p.yaml" 127.0.0.1:9050
has "$tmp/out" "passthrough rule match: 127.0.0.1:9000-9100 ($tmp/p.yaml:11): connections are left alone"
expect 0 "$CLI" explain --policy "$tmp/p.yaml" unix:/run/app/x.sock
has "$tmp/out" "match: unix:/run/app/*.sock ($tmp/p.yaml:13)"
expect 0 "$CLI" explain --policy "$tmp/p.yaml" unix:/run/other.sock
has "$tmp/out" "not managed"
expect 0 "$CLI" explain --policy "$tmp/p.yaml" '[2001:db8::1]:443'
has "$tmp/out" "2001:db8::1, port 443"

RESOLUTE_POLICY="$tmp/p.yaml" expect 0 "$CLI" explain db.internal:5432
has "$tmp/out" "($tmp/p.yaml:7)"
expect 2 "$CLI" explain
expect 2 "$CLI" explain 'bad host!:80'
expect 2 "$CLI" explain db.internal:99999
expect 1 "$CLI" explain --policy "$tmp/typo.yaml" db.internal
grep -Eq "^$tmp/typo.yaml:3:3: error: " "$tmp/err" ||
	fail "explain with an invalid policy: $(cat "$tmp/err")"

# --- run ----------------------------------------------------------------
expect 0 env RESOLUTE_LIB="$LIB" LD_PRELOAD="/opt/a.so /opt/b.so" \
	"$CLI" run --log debug -- env
has "$tmp/out" "LD_PRELOAD=$LIB:/opt/a.so /opt/b.so"
has "$tmp/out" "RESOLUTE_LOG=debug"
expect 0 env RESOLUTE_LIB="$LIB" LD_PRELOAD="/opt/a.so:$LIB" "$CLI" run env
has "$tmp/out" "LD_PRELOAD=/opt/a.so:$LIB"
if [ -f "${RS_BUILD:-}/libresolute.so" ] && [ -z "${RS_ASAN:-}" ]; then
	expect 0 "$CLI" run -- env
	has "$tmp/out" "LD_PRELOAD=$RS_BUILD/libresolute.so"
fi

# A deadline is set to about now + D, and an earlier inherited one is kept.
before=$(($(date +%s) * 1000))
expect 0 env RESOLUTE_LIB="$LIB" "$CLI" run --deadline 90s -- env
after=$(($(date +%s) * 1000 + 1000))
got=$(sed -n 's/^RESOLUTE_DEADLINE=//p' "$tmp/out")
if [ -z "$got" ] || [ "$got" -lt $((before + 90000)) ] ||
	[ "$got" -gt $((after + 90000)) ]; then
	fail "RESOLUTE_DEADLINE=$got not in [$before, $after] + 90s"
fi
early=$((before + 1000))
expect 0 env RESOLUTE_LIB="$LIB" RESOLUTE_DEADLINE=$early \
	"$CLI" run --deadline 1m -- env
has "$tmp/out" "RESOLUTE_DEADLINE=$early"
expect 0 env RESOLUTE_LIB="$LIB" RESOLUTE_DEADLINE=$((before + 600000)) \
	"$CLI" run --deadline 1s -- env
grep -q "^RESOLUTE_DEADLINE=$((before + 600000))\$" "$tmp/out" &&
	fail "run --deadline 1s kept a later inherited deadline"
# An inherited value the library would ignore (not above 0) is replaced
# with a warning, never kept in place of the one asked for.
for bad in 0 -5; do
	expect 0 env RESOLUTE_LIB="$LIB" RESOLUTE_DEADLINE=$bad \
		"$CLI" run --deadline 90s -- env
	got=$(sed -n 's/^RESOLUTE_DEADLINE=//p' "$tmp/out")
	[ -n "$got" ] && [ "$got" -ge $((before + 90000)) ] ||
		fail "run --deadline 90s kept RESOLUTE_DEADLINE=$bad ($got)"
	has "$tmp/err" "ignoring invalid RESOLUTE_DEADLINE='$bad'"
done

# The policy is exported as an absolute path; an invalid one still runs,
# unless RESOLUTE_STRICT=1.
cp "$tmp/p.yaml" "$tmp/rel.yaml"
(cd "$tmp" && RESOLUTE_LIB="$LIB" "$CLI" run --policy rel.yaml -- env) \
	>"$tmp/out" 2>"$tmp/err" || fail "run --policy rel.yaml failed"
has "$tmp/out" "RESOLUTE_POLICY=$tmp/rel.yaml"
expect 0 env RESOLUTE_LIB="$LIB" "$CLI" run --policy "$tmp/typo.yaml" -- true
has "$tmp/err" "$tmp/typo.yaml:3:3: error:"
expect 78 env RESOLUTE_LIB="$LIB" RESOLUTE_STRICT=1 \
	"$CLI" run --policy "$tmp/typo.yaml" -- true

expect 127 env RESOLUTE_LIB="$LIB" "$CLI" run -- resolute-no-such-command
has "$tmp/err" "command not found"
expect 3 env RESOLUTE_LIB="$LIB" "$CLI" run -- sh -c 'exit 3'
expect 2 "$CLI" run
expect 2 "$CLI" run --deadline 5 -- true
expect 2 "$CLI" run --log loud -- true

# --deadline takes the policy's duration grammar (duration.c, the same
# code): decimals that make whole milliseconds; nothing rounded, no
# exponents, no `off`.
expect 0 env RESOLUTE_LIB="$LIB" "$CLI" run --deadline 1.5s -- true
expect 0 env RESOLUTE_LIB="$LIB" "$CLI" run --deadline 500ms -- true
expect 0 env RESOLUTE_LIB="$LIB" "$CLI" run --deadline=2m -- true
expect 2 "$CLI" run --deadline 0.0001s -- true
has "$tmp/err" "not a whole number of milliseconds"
expect 2 "$CLI" run --deadline 1e3ms -- true
expect 2 "$CLI" run --deadline off -- true
expect 2 "$CLI" run --deadline 4294967295ms -- true

# "warning" is "warn" for --log as for RESOLUTE_LOG (rs_log_level_parse).
expect 0 env RESOLUTE_LIB="$LIB" "$CLI" run --log warning -- env
has "$tmp/out" "RESOLUTE_LOG=warning"
expect 2 "$CLI" run --frobnicate -- true

printf 'int main(void) { return 0; }\n' >"$tmp/st.c"
if cc -static -o "$tmp/static" "$tmp/st.c" 2>/dev/null; then
	expect 0 env RESOLUTE_LIB="$LIB" PATH="$tmp:$PATH" "$CLI" run static
	has "$tmp/err" "resolute: warning: static is statically linked; LD_PRELOAD cannot act on it"
	expect 0 env RESOLUTE_LIB="$LIB" "$CLI" run -- true
	grep -q "statically linked" "$tmp/err" &&
		fail "true reported as statically linked"
else
	echo "note: no static libc, static-binary warning not tested"
fi
cp /bin/true "$tmp/suid" && chmod 4755 "$tmp/suid"
expect 0 env RESOLUTE_LIB="$LIB" "$CLI" run "$tmp/suid"
has "$tmp/err" "is setuid; the dynamic loader ignores LD_PRELOAD"

# --- systemd --------------------------------------------------------------
# A fake systemctl reports that the unit already preloads something.
mkdir "$tmp/bin"
cat >"$tmp/bin/systemctl" <<'SH'
#!/bin/sh
echo "Environment=FOO=1 LD_PRELOAD=/opt/own.so BAR=2"
SH
chmod +x "$tmp/bin/systemctl"
expect 0 env RESOLUTE_LIB="$LIB" PATH="/nonexistent" "$CLI" systemd web
has "$tmp/out" "[Service]"
has "$tmp/out" "Environment=LD_PRELOAD=$LIB"
expect 0 env RESOLUTE_LIB="$LIB" PATH="$tmp/bin:$PATH" \
	"$CLI" systemd --policy "$tmp/p.yaml" web.service
has "$tmp/out" "Environment=LD_PRELOAD=$LIB:/opt/own.so"
has "$tmp/out" "Environment=RESOLUTE_POLICY=$tmp/p.yaml"
has "$tmp/out" "# The unit's own LD_PRELOAD (/opt/own.so) is kept"
expect 1 env RESOLUTE_LIB="$LIB" "$CLI" systemd --policy "$tmp/typo.yaml" web
expect 2 "$CLI" systemd
expect 2 "$CLI" systemd web.socket

sd="$tmp/systemd"
mkdir "$sd"
expect 0 env RESOLUTE_LIB="$LIB" PATH="/nonexistent" SYSTEMD_DIR="$sd" \
	"$CLI" systemd --install rstest
conf="$sd/rstest.service.d/resolute.conf"
has "$tmp/out" "$conf"
has "$tmp/out" "systemctl daemon-reload && systemctl restart rstest.service"
grep -qsF "Environment=LD_PRELOAD=$LIB" "$conf" ||
	fail "--install did not write $conf"
[ "$(stat -c %a "$conf" 2>/dev/null)" = 644 ] || fail "$conf is not 0644"
if command -v systemd-analyze >/dev/null 2>&1; then
	printf '[Service]\nExecStart=/bin/true\n' >"$sd/rstest.service"
	SYSTEMD_UNIT_PATH="$sd:" timeout 30 systemd-analyze verify \
		"$sd/rstest.service" >"$tmp/out" 2>&1
	grep -F resolute.conf "$tmp/out" &&
		fail "systemd-analyze verify objects to the drop-in"
fi

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all CLI cases passed"
