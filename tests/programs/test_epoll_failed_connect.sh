#!/bin/sh
# SPDX-License-Identifier: MIT
# test_epoll_failed_connect.sh - a program that registers (or re-arms) an
# epoll registration after its managed connect failed for good sees the
# failure as Linux shows a dead socket: EPOLLOUT|EPOLLERR|EPOLLHUP, for
# level-triggered, edge-triggered and one-shot registrations alike.  Each
# case runs without the library too, so that the expectation is Linux's.
# python3 drives it (its select.epoll and select.poll call libc directly).
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${RS_BUILD:-$PWD/build}
LIB=${RS_LIB:-$B/libresolute.so}
command -v python3 >/dev/null 2>&1 || { echo "SKIPPED: no python3"; exit 0; }
tmp=$(mktemp -d /tmp/rs-epoll-failed-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf 'version: 1\ndefaults:\n  attempts: 1\n  connect_timeout: 1s\n' \
	>"$tmp/policy.yaml"
cat >"$tmp/case.py" <<'PY'
import select, socket, sys

kind, how = sys.argv[1], sys.argv[2]
flags = {"lt": 0, "et": select.EPOLLET, "oneshot": select.EPOLLONESHOT}[kind]
flags |= select.EPOLLOUT
closed = socket.socket()
closed.bind(("127.0.0.1", 0))		# bound, never listening: refused
s = socket.socket()
s.setblocking(False)
s.connect_ex(closed.getsockname())
ep = select.epoll()
if how == "rearm":
    ep.register(s.fileno(), flags)
    first = ep.poll(2)
    ep.modify(s.fileno(), flags)
else:
    p = select.poll()			# the connect ends in this wait
    p.register(s.fileno(), select.POLLOUT)
    p.poll(2000)
    ep.register(s.fileno(), flags)
got = ep.poll(2)
print(",".join(hex(e) for _, e in got) or "nothing")
PY
fails=0
for kind in lt et oneshot; do
	for how in after rearm; do
		bare=$(timeout 10 python3 "$tmp/case.py" $kind $how 2>&1)
		lib=$(timeout 10 env LD_PRELOAD="$LIB" \
			RESOLUTE_POLICY="$tmp/policy.yaml" \
			python3 "$tmp/case.py" $kind $how 2>&1)
		if [ "$lib" = 0x1c ] && [ "$bare" = 0x1c ]; then
			echo "ok    $kind registration $how the failure: $lib"
		else
			echo "FAIL  $kind registration $how the failure:" \
				"$lib (without the library: $bare)"
			fails=$((fails + 1))
		fi
	done
done
[ $fails -eq 0 ]
