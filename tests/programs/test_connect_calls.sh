#!/bin/sh
# SPDX-License-Identifier: MIT
# test_connect_calls.sh - a managed blocking connect to a local listener
# makes at most 3 system calls more than without the library (issue 13),
# and none of the non-blocking path's (fcntl, poll, the outcome's
# questions) or a getpid; under the default policy, where nothing times
# the socket, not even the fstat of its identity (2 more, the connect's
# own SO_SNDTIMEO); a dup of the managed socket adds none; and a request
# on a new connection under read and write timeouts asks nothing of the
# kernel: counted with strace between the two markers of
# build/itests/connect_calls, bare and under the library.  Not under ASan,
# whose run-time makes calls of its own.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${RS_BUILD:-$PWD/build}
LIB=${RS_LIB:-$B/libresolute.so}
. tests/programs/lib.sh
fails=0
[ -n "${RS_ASAN:-}" ] && { echo "SKIPPED: system calls counted without ASan only"; exit 0; }
command -v strace >/dev/null 2>&1 || { echo "SKIPPED: no strace"; exit 0; }
strace -o /dev/null true 2>/dev/null || { echo "SKIPPED: strace cannot trace here"; exit 0; }
tmp=$(mktemp -d /tmp/rs-connect-calls-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp policy/default.yaml "$tmp/policy.yaml"

# calls TRACE: the system calls between the markers, one name a line.
calls() {
	awk '/^getppid\(/ { n++; next } n == 1 { sub(/\(.*/, ""); print }' "$1"
}

# trace TAG POLICY [MODE]: build/itests/connect_calls (with MODE), bare
# and under the library with POLICY, each traced; sets bare and with (the
# counts of calls between the markers), names (the library's calls) and
# out (both outputs, for messages); true when both connected.
trace() {
	timeout 20 strace -qq -o "$tmp/$1.bare" "$B/itests/connect_calls" \
		${3:+"$3"} >"$tmp/$1.out.bare"
	timeout 20 env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$2" \
		RESOLUTE_LOG=error strace -qq -o "$tmp/$1.with" \
		"$B/itests/connect_calls" ${3:+"$3"} >"$tmp/$1.out.with"
	bare=$(calls "$tmp/$1.bare" | wc -l)
	with=$(calls "$tmp/$1.with" | wc -l)
	names=$(calls "$tmp/$1.with" | tr '\n' ' ')
	out="bare '$(cat "$tmp/$1.out.bare")', with '$(cat "$tmp/$1.out.with")'"
	grep -q connected "$tmp/$1.out.bare" &&
	    grep -q connected "$tmp/$1.out.with"
}

if trace connect "$tmp/policy.yaml"; then
	ok "connected bare and under the library"
else
	fail "connect: $out"
fi
if [ "$bare" -gt 0 ] && [ "$with" -le $((bare + 3)) ]; then
	ok "$with system calls under the library, $bare bare: $names"
else
	fail "$with system calls under the library (bare $bare, at most $((bare + 3))): $names"
fi
if calls "$tmp/connect.with" | grep -qE '^(fcntl|poll|ppoll|ioctl|getpid|getpeername|getsockopt)$'; then
	fail "the non-blocking path's calls in a plain blocking connect: $names"
else
	ok "no fcntl, poll, ioctl, getpid, getpeername or getsockopt"
fi
# No read or write timeout, no deadline: no timeout will ever ask which
# socket the number is, so the connect does not take its inode.
if [ "$with" -le $((bare + 2)) ] && ! calls "$tmp/connect.with" | grep -qE '^(fstat|newfstatat|statx)$'; then
	ok "default policy: no fstat, $with calls"
else
	fail "default policy: the identity taken where nothing times the socket: $names"
fi

# A dup of the managed socket: the copy's entry takes the original's
# identity, and asks the kernel nothing.
cbare=$bare cwith=$with
if trace dup "$tmp/policy.yaml" dup && [ "$bare" -eq $((cbare + 2)) ] &&
    [ "$with" -eq $((cwith + 2)) ]; then
	ok "dup: $with system calls under the library, $bare bare: $names"
else
	fail "dup: $with system calls (bare $bare; without the dup $cwith and $cbare): $names; $out"
fi

# A request on the new connection under read and write timeouts: the first
# read arms the library's SO_RCVTIMEO (one setsockopt), and nothing asks
# the kernel for the program's own timeouts, which socket() left at 0.
printf 'version: 1\ndefaults:\n  read_timeout: 5s\n  write_timeout: 5s\n' \
	>"$tmp/rw5s.yaml"
if trace request "$tmp/rw5s.yaml" request && [ "$bare" -gt 0 ] &&
    [ "$with" -le $((bare + 4)) ]; then
	ok "request: $with system calls under read/write timeouts, $bare bare: $names"
else
	fail "request: $with system calls (bare $bare, at most $((bare + 4))): $names; $out"
fi
if calls "$tmp/request.with" | grep -qE '^(fcntl|poll|ppoll|getsockopt)$'; then
	fail "request: the program's timeouts asked of the kernel, or a wait: $names"
else
	ok "request: no getsockopt, fcntl or poll"
fi
[ "$fails" -eq 0 ]
