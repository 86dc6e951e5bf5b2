#!/bin/sh
# SPDX-License-Identifier: MIT
# deps.sh - makes sure the packages that build and test resolute are here.
#
#   scripts/deps.sh        what `make test` needs
#   scripts/deps.sh deb    also what `make deb` and its check in .ci/run
#                          need: debhelper, lintian, promtool (prometheus)
#   scripts/deps.sh bench  also what `make bench` measures against:
#                          HAProxy, for the sidecar comparison
#
# Debian/Ubuntu.  Fast when everything is present (one dpkg-query call).
# Missing packages are installed when run as root; otherwise the exact
# apt-get command is printed and the exit status is 1.
set -u

# Debian packages checked through dpkg (libraries and headers have no
# command to look for).  The database servers, clients and benchmarks are
# for the real-service tier (tests/programs/test_services_*.sh); Python's
# own test suite (for /usr/bin/python3) for scripts/peer-suite.sh.
PKGS="make gcc libc6-dev libyaml-dev libcmocka-dev nftables iproute2
netcat-openbsd curl wget nodejs openjdk-17-jdk-headless mandoc clang libclang-rt-14-dev valgrind shellcheck cppcheck
gcovr node-llhttp php-cli procps util-linux
postgresql postgresql-contrib redis-server redis-tools mariadb-server mariadb-client
libpython3.11-testsuite"
# Real programs of tests/programs: nginx as a reverse proxy (and with TLS
# and HTTP/2 in front of the https test server), redis-cli; the openssl
# CLI makes the https tests' throw-away CA, libssl-dev builds the TLS bench,
# IO::Socket::SSL lets Perl's HTTP::Tiny speak https; gnutls-cli (gnutls-bin)
# is the GnuTLS client that offers h2, git's https helper the libcurl-gnutls
# one, lighttpd with mod_gnutls the GnuTLS server that proxies
# (test_https_gnutls.sh); ruby for Net::HTTP (test_https_retry.sh).
PKGS="$PKGS nginx-light openssl libssl-dev libio-socket-ssl-perl gnutls-bin
git lighttpd lighttpd-mod-gnutls ruby"
if [ "${1:-}" = bench ]; then
	PKGS="$PKGS haproxy"
fi
if [ "${1:-}" = deb ]; then
	# dpkg-buildpackage also wants build-essential, always.
	PKGS="$PKGS build-essential dpkg-dev debhelper lintian prometheus"
fi

missing=""

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "deps.sh: not a Debian system; make sure the equivalents of" \
		"these are installed: $PKGS python3" | tr '\n' ' ' >&2
	echo >&2
	exit 0
fi

# Packages dpkg reports as installed, on one line between blanks.
# shellcheck disable=SC2086 # the list is split into names on purpose
installed=" $(dpkg-query -W -f='${Package} ${Status}\n' $PKGS 2>/dev/null |
	awk '$NF == "installed" { printf "%s ", $1 }')"

for p in $PKGS; do
	case "$installed" in
	*" $p "*) ;;
	*) missing="$missing $p" ;;
	esac
done

# python3 may come from pyenv or another prefix: any python3 will do.
command -v python3 >/dev/null 2>&1 || missing="$missing python3"

[ -z "$missing" ] && exit 0

cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages:$missing" >&2
	echo "deps.sh: as root, run:" >&2
	echo "  apt-get update && DEBIAN_FRONTEND=noninteractive $cmd" >&2
	exit 1
fi
echo "deps.sh: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update && $cmd
