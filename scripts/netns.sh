#!/bin/sh
# SPDX-License-Identifier: MIT
# netns.sh - runs a command inside a private network namespace with faults.
#
#   scripts/netns.sh COMMAND [ARG...]
#
# Inside, the loopback interface is up and nftables injects two faults on
# addresses that exist only there:
#   127.0.0.2  every TCP SYN is dropped (a blackholed host)
#   127.0.0.3  TCP is rejected with ICMP host-unreachable
# No traffic can leave the namespace.  Needs root (unshare -n, nft); without
# it the command runs as is with RS_NETNS unset, and the tests that need the
# faults print SKIPPED.
set -eu
if [ "${RS_NETNS:-}" = 1 ]; then
	exec "$@"
fi
if [ "$(id -u)" != 0 ] || ! command -v nft >/dev/null 2>&1 ||
    ! unshare -n true 2>/dev/null; then
	echo "netns.sh: no private network namespace (needs root and nft);" \
	    "fault tests will be skipped" >&2
	exec "$@"
fi
exec unshare -n sh -c '
	set -e
	ip link set lo up
	nft -f - <<RULES
table inet resolute_faults {
	chain out {
		type filter hook output priority 0; policy accept;
		ip daddr 127.0.0.2 tcp flags syn drop
		ip daddr 127.0.0.3 meta l4proto tcp reject with icmp type host-unreachable
	}
}
RULES
	RS_NETNS=1 exec "$@"
' netns "$@"
