#!/bin/sh
# SPDX-License-Identifier: MIT
# test_secure.sh - secure-execution mode (AT_SECURE, SPEC §3): a setuid
# program ignores RESOLUTE_POLICY and RESOLUTE_LOG_FILE, which an
# unprivileged user could otherwise point at files of their choosing.
#
# What the dynamic loader allows, found and asserted here: for a setuid
# program it ignores LD_PRELOAD entries that contain a '/', and loads a
# bare name only from a trusted system directory, and only when that file
# is itself set-user-ID.  So the test installs a setuid copy of the library
# under a unique name in the system library directory (removed on exit),
# and runs a root-owned setuid copy of rsclient as nobody.  The control is
# a plain copy of the same client, for which both variables do apply.
# Needs root and setpriv; RS_LIB and RS_BUILD (scripts/run-tests.sh).
set -u
RS_BUILD=${RS_BUILD:-$PWD/build}
RS_LIB=${RS_LIB:-$RS_BUILD/libresolute.so}
lib=${RS_LIB##* }
[ "$(id -u)" -eq 0 ] || { echo "SKIPPED: needs root (setuid files)"; exit 0; }
command -v setpriv >/dev/null 2>&1 || { echo "SKIPPED: no setpriv"; exit 0; }
[ "$lib" = "$RS_LIB" ] ||
	{ echo "SKIPPED: a sanitizer runtime cannot be preloaded setuid"; exit 0; }
sysdir=/usr/lib/$(cc -print-multiarch 2>/dev/null)
[ -d "$sysdir" ] || sysdir=/usr/lib
name=libresolute-sectest-$$.so
tmp=$(mktemp -d)
fails=0
cleanup() {
	rm -f "${sysdir:?}/$name"
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	sed 's/^/    | /' "$tmp/err" 2>/dev/null
	fails=$((fails + 1))
}

chmod 755 "$tmp"
mkdir -m 1777 "$tmp/logs"
install -m 4755 -o root "$lib" "$sysdir/$name"
install -m 4755 -o root "$RS_BUILD/itests/rsclient" "$tmp/suid"
install -m 0755 -o root "$RS_BUILD/itests/rsclient" "$tmp/plain"
printf 'version: 1\ndefaults:\n  attempts: 5\n  backoff:\n    base: 10ms\n' \
	>"$tmp/policy.yaml"
chmod 644 "$tmp/policy.yaml"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# run PRELOAD CLIENT LOG: the client as nobody, connecting to a refused port.
run() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
		env -u RESOLUTE_LOG LD_PRELOAD="$1" \
		RESOLUTE_POLICY="$tmp/policy.yaml" \
		RESOLUTE_LOG_FILE="$tmp/logs/$3" \
		timeout 20 "$tmp/$2" 127.0.0.1 "$port" connect \
		>"$tmp/out" 2>"$tmp/err"
}

# The control: not setuid, so the policy and the log file apply.
run "$name" plain plain.log
grep -q 'attempt 5/5' "$tmp/logs/plain.log" 2>/dev/null ||
	fail "plain client: RESOLUTE_POLICY/RESOLUTE_LOG_FILE not honoured"

# Setuid: the library is loaded (it logs retries on stderr), but under the
# built-in (or system) policy, and no log file is opened.
run "$name" suid suid.log
if [ -e "$tmp/logs/suid.log" ]; then
	fail "setuid client: RESOLUTE_LOG_FILE was opened"
elif ! grep -q 'resolute\[' "$tmp/err"; then
	fail "setuid client: the setuid library in $sysdir was not loaded"
elif grep -q 'attempt [0-9]/5' "$tmp/err"; then
	fail "setuid client: RESOLUTE_POLICY was honoured"
fi

# The loader's own rule: a path with '/' is not preloaded at all.
run "$sysdir/$name" suid path.log
grep -q 'resolute\[' "$tmp/err" &&
	fail "setuid client: a preload path with '/' was loaded"

[ $fails -eq 0 ] && echo "secure mode: all passed"
[ $fails -eq 0 ]
