#!/bin/sh
# SPDX-License-Identifier: MIT
# deb-check.sh - the Debian package end to end, as an operator meets it:
# build it (`make deb`), lintian, `apt-get install ./resolute_*.deb`, run
# the demo with the installed command (which must find the installed
# library by itself), write the Prometheus textfile with `resolute stats
# --output` and check it with promtool, then `apt-get remove` (the conffile
# /etc/resolute/policy.yaml stays) and `apt-get purge`, and show that
# nothing is left: `dpkg -L` fails, every file of the package and
# /etc/resolute are gone.
#
# Needs root (it installs a package) and changes the machine: it refuses
# to run where a resolute package or /etc/resolute already exists, so that
# it never purges an administrator's installation.  Takes about 40 s.
set -eu
cd "$(dirname "$0")/.."
B=${B:-build}
if [ "$(id -u)" != 0 ]; then
	echo "SKIPPED: installing a package needs root"
	exit 0
fi
if dpkg-query -W -f='${Status}' resolute 2>/dev/null | grep -q installed ||
    [ -e /etc/resolute ]; then
	echo "deb-check: resolute is already installed here (or /etc/resolute" \
	    "exists); not touching it" >&2
	exit 1
fi
scripts/deps.sh deb
tmp=$(mktemp -d)
installed=0
cleanup() {
	[ $installed = 1 ] && apt-get purge -y -q resolute >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

step() { printf '\n-- %s\n' "$*"; }

step "make deb"
make --no-print-directory -s deb
deb=$(ls "$B"/resolute_*_*.deb)
dpkg-deb -c "$deb" | awk '{ print $6 }'

step "lintian $deb"
lintian --fail-on error,warning --display-level '>=warning' "$deb" 2>&1 |
	grep -v 'running with root privileges' || true
lintian --fail-on error,warning "$deb" >/dev/null 2>&1

step "apt-get install ./$deb"
installed=1
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	"./$deb" >"$tmp/apt.log" 2>&1 || { cat "$tmp/apt.log"; exit 1; }
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
lib=/usr/lib/$multiarch/resolute/libresolute.so
for f in /usr/bin/resolute "$lib" /etc/resolute/policy.yaml \
    /usr/share/man/man1/resolute.1.gz /usr/share/man/man5/resolute-policy.5.gz \
    /lib/systemd/system/resolute-metrics.timer \
    /usr/share/doc/resolute/examples/database.yaml; do
	[ -f "$f" ] || { echo "deb-check: $f not installed" >&2; exit 1; }
done
dpkg-query -W -f='${Conffiles}\n' resolute | grep -q ' /etc/resolute/policy.yaml ' ||
	{ echo "deb-check: /etc/resolute/policy.yaml is not a conffile" >&2; exit 1; }
[ ! -e /etc/systemd/system/timers.target.wants/resolute-metrics.timer ] ||
	{ echo "deb-check: the metrics timer was enabled" >&2; exit 1; }
[ "$(command -v resolute)" = /usr/bin/resolute ]
resolute version
resolute systemd demo | grep -qF "LD_PRELOAD=$lib" ||
	{ echo "deb-check: resolute systemd does not name $lib" >&2; exit 1; }
echo "installed; resolute systemd preloads $lib"

make --no-print-directory -s "$B/itests/peer"
step "the demo, with the installed resolute and library"
policy="$tmp/demo.yaml"
RS_DEMO_INSTALLED=1 RS_DEMO_POLICY="$policy" timeout 60 scripts/demo.sh \
	>"$tmp/demo.log" 2>&1 || { cat "$tmp/demo.log"; exit 1; }
grep -F 'resolute[' "$tmp/demo.log"
grep -q 'succeeded on attempt' "$tmp/demo.log"

step "resolute stats --format prometheus --output (the textfile)"
prom="$tmp/resolute.prom"
resolute stats --policy "$policy" --format prometheus --output "$prom"
promtool check metrics <"$prom"
grep -v '^#' "$prom" | grep -v ' 0$' || true
grep -qE "^resolute_retries_total\{policy=\"$policy\",rule=\"defaults\"\} [1-9]" "$prom" ||
	{ echo "deb-check: no retries counted for the demo" >&2; exit 1; }
rm -f "$policy"
resolute stats --prune >/dev/null

step "apt-get remove resolute (keeps the conffile), then purge"
dpkg -L resolute | sort -r >"$tmp/files"
apt-get remove -y -q resolute >"$tmp/apt.log" 2>&1 || { cat "$tmp/apt.log"; exit 1; }
[ -f /etc/resolute/policy.yaml ] && [ ! -e /usr/bin/resolute ] ||
	{ echo "deb-check: remove did not keep just the conffile" >&2; exit 1; }
echo "removed: /etc/resolute/policy.yaml kept, /usr/bin/resolute gone"
apt-get purge -y -q resolute >"$tmp/apt.log" 2>&1 || { cat "$tmp/apt.log"; exit 1; }
installed=0
if dpkg -L resolute >/dev/null 2>&1; then
	echo "deb-check: dpkg -L still lists resolute after purge" >&2
	exit 1
fi
left=""
while read -r f; do
	# Directories shared with other packages (/usr, /lib/systemd...) stay;
	# so do symbolic links to directories (/lib on a merged /usr).
	if [ -f "$f" ] || { [ -L "$f" ] && [ ! -d "$f" ]; }; then
		left="$left $f"
	fi
done <"$tmp/files"
[ -e /etc/resolute ] && left="$left /etc/resolute"
[ -e "/usr/lib/$multiarch/resolute" ] && left="$left /usr/lib/$multiarch/resolute"
if [ -n "$left" ]; then
	echo "deb-check: left after purge:$left" >&2
	exit 1
fi
echo "purged: dpkg -L fails, no file of the package and no /etc/resolute left"
