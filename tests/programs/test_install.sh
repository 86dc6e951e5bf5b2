#!/bin/sh
# SPDX-License-Identifier: MIT
# test_install.sh - `make install DESTDIR=... PREFIX=/usr/local` puts every
# artifact of SPEC §1 in place with sane modes, and `make uninstall` takes
# them away again (keeping the administrator's /etc/resolute/policy.yaml).
set -u
cd "$(dirname "$0")/../.." || exit 2
build=${RS_BUILD:-$PWD/build}
B=$(basename "$build")
if [ ! -f "$build/libresolute.so" ] || [ ! -x "$build/resolute" ]; then
	echo "SKIPPED: $B/libresolute.so or $B/resolute is not built"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# mode PATH OCTAL: PATH exists as a regular file with that mode.
mode() {
	if [ ! -f "$tmp$1" ]; then
		fail "$1 not installed"
	elif [ "$(stat -c %a "$tmp$1")" != "$2" ]; then
		fail "$1 has mode $(stat -c %a "$tmp$1"), expected $2"
	fi
}

make --no-print-directory -s install B="$B" DESTDIR="$tmp" \
	PREFIX=/usr/local >"$tmp.log" 2>&1 || {
	cat "$tmp.log"
	rm -f "$tmp.log"
	fail "make install failed"
	exit 1
}
rm -f "$tmp.log"
mode /usr/local/lib/resolute/libresolute.so 644
mode /usr/local/bin/resolute 755
mode /usr/local/share/resolute/default.yaml 644
mode /usr/local/share/man/man1/resolute.1 644
mode /usr/local/share/man/man5/resolute-policy.5 644
mode /etc/resolute/policy.yaml 644
cmp -s policy/default.yaml "$tmp/usr/local/share/resolute/default.yaml" ||
	fail "installed default.yaml differs from policy/default.yaml"
"$tmp/usr/local/bin/resolute" version >/dev/null ||
	fail "the installed resolute does not run"

# An existing /etc/resolute/policy.yaml is never overwritten.
echo "# mine" >"$tmp/etc/resolute/policy.yaml"
make --no-print-directory -s install B="$B" DESTDIR="$tmp" \
	PREFIX=/usr/local >/dev/null 2>&1 || fail "second make install failed"
grep -q "^# mine" "$tmp/etc/resolute/policy.yaml" ||
	fail "make install overwrote /etc/resolute/policy.yaml"

make --no-print-directory -s uninstall B="$B" DESTDIR="$tmp" \
	PREFIX=/usr/local >/dev/null 2>&1 || fail "make uninstall failed"
left=$(find "$tmp" -type f ! -path "$tmp/etc/resolute/policy.yaml")
[ -z "$left" ] || fail "left after uninstall: $left"
[ -f "$tmp/etc/resolute/policy.yaml" ] ||
	fail "uninstall removed /etc/resolute/policy.yaml"

[ "$fails" -eq 0 ] || exit 1
echo "install and uninstall ok"
