#!/bin/sh
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

timeout 20 strace -qq -o "$tmp/bare" "$B/itests/connect_calls" >"$tmp/out.bare"
timeout 20 env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$tmp/policy.yaml" \
	RESOLUTE_LOG=error strace -qq -o "$tmp/with" \
	"$B/itests/connect_calls" >"$tmp/out.with"
bare=$(calls "$tmp/bare" | wc -l)
with=$(calls "$tmp/with" | wc -l)
names=$(calls "$tmp/with" | tr '\n' ' ')
if grep -q connected "$tmp/out.bare" && grep -q connected "$tmp/out.with"; then
	ok "connected bare and under the library"
else
	fail "connect: bare '$(cat "$tmp/out.bare")', with '$(cat "$tmp/out.with")'"
fi
if [ "$bare" -gt 0 ] && [ "$with" -le $((bare + 3)) ]; then
	ok "$with system calls under the library, $bare bare: $names"
else
	fail "$with system calls under the library (bare $bare, at most $((bare + 3))): $names"
fi
if calls "$tmp/with" | grep -qE '^(fcntl|poll|ppoll|ioctl|getpid|getpeername|getsockopt)$'; then
	fail "the non-blocking path's calls in a plain blocking connect: $names"
else
	ok "no fcntl, poll, ioctl, getpid, getpeername or getsockopt"
fi
# No read or write timeout, no deadline: no timeout will ever ask which
# socket the number is, so the connect does not take its inode.
if [ "$with" -le $((bare + 2)) ] && ! calls "$tmp/with" | grep -qE '^(fstat|newfstatat|statx)$'; then
	ok "default policy: no fstat, $with calls"
else
	fail "default policy: the identity taken where nothing times the socket: $names"
fi

# A dup of the managed socket: the copy's entry takes the original's
# identity, and asks the kernel nothing.
timeout 20 strace -qq -o "$tmp/dbare" "$B/itests/connect_calls" dup \
	>"$tmp/out.dbare"
timeout 20 env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$tmp/policy.yaml" \
	RESOLUTE_LOG=error strace -qq -o "$tmp/dwith" \
	"$B/itests/connect_calls" dup >"$tmp/out.dwith"
dbare=$(calls "$tmp/dbare" | wc -l)
dwith=$(calls "$tmp/dwith" | wc -l)
names=$(calls "$tmp/dwith" | tr '\n' ' ')
if grep -q connected "$tmp/out.dbare" && grep -q connected "$tmp/out.dwith" &&
    [ "$dbare" -eq $((bare + 2)) ] && [ "$dwith" -eq $((with + 2)) ]; then
	ok "dup: $dwith system calls under the library, $dbare bare: $names"
else
	fail "dup: $dwith system calls (bare $dbare; without the dup $with and $bare): $names"
fi

# A request on the new connection under read and write timeouts: the first
# read arms the library's SO_RCVTIMEO (one setsockopt), and nothing asks
# the kernel for the program's own timeouts, which socket() left at 0.
printf 'version: 1\ndefaults:\n  read_timeout: 5s\n  write_timeout: 5s\n' \
	>"$tmp/rw5s.yaml"
timeout 20 strace -qq -o "$tmp/rbare" "$B/itests/connect_calls" request \
	>"$tmp/out.rbare"
timeout 20 env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$tmp/rw5s.yaml" \
	RESOLUTE_LOG=error strace -qq -o "$tmp/rwith" \
	"$B/itests/connect_calls" request >"$tmp/out.rwith"
bare=$(calls "$tmp/rbare" | wc -l)
with=$(calls "$tmp/rwith" | wc -l)
names=$(calls "$tmp/rwith" | tr '\n' ' ')
if grep -q connected "$tmp/out.rbare" && grep -q connected "$tmp/out.rwith" &&
    [ "$bare" -gt 0 ] && [ "$with" -le $((bare + 4)) ]; then
	ok "request: $with system calls under read/write timeouts, $bare bare: $names"
else
	fail "request: $with system calls (bare $bare, at most $((bare + 4))): $names; out '$(cat "$tmp/out.rbare")' '$(cat "$tmp/out.rwith")'"
fi
if calls "$tmp/rwith" | grep -qE '^(fcntl|poll|ppoll|getsockopt)$'; then
	fail "request: the program's timeouts asked of the kernel, or a wait: $names"
else
	ok "request: no getsockopt, fcntl or poll"
fi
[ "$fails" -eq 0 ]
