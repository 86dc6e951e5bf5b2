#!/bin/sh
# SPDX-License-Identifier: MIT
# test_close_race.sh - a thread blocked in read() under read_timeout 1s
# while another thread closes that socket and connects anew, getting the
# same descriptor number (close_race_client.c).  Without the library the
# blocked read stays blocked on the closed connection; under it, when its
# timeout ends, it must fail -- never return the bytes of the new
# connection, which belong to the other thread.
#
# The bug this guards against: after the kernel-timed first try
# (ktimeo.c) or the slow path's poll (io_block.c) the library went on with
# the descriptor number and the table entry of that number, which by then
# belonged to the new socket, and the blocked read returned the new
# connection's 94 bytes while their owner read an end of file.  Each entry
# now has a generation (fdtable.h, rs_fd_gen()) that a call compares after
# each wait: the blocked read fails with EBADF.  Two cases: a read right
# after the request (the kernel's timer) and one 20 ms later (the
# library's poll), each without and with an `http:` rule.  And a blocking
# connect still under way when the other thread closes (connect_wait.c):
# it reported the new connection's success as its own, and it now fails
# with EBADF too, leaving the new socket's flags alone.  And a read of a
# connection whose HTTP state the close frees, as the read enters it.
#
# About 20 s.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${RS_BUILD:-$PWD/build}
LIB=${RS_LIB:-$B/libresolute.so}
PEER=$B/itests/peer
[ -x "$PEER" ] || { echo "SKIPPED: $PEER not built (make tests)"; exit 0; }
tmp=$(mktemp -d /tmp/rs-crace-XXXXXX)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
for c in close_race_client close_enter_client; do
	if ! ${CC:-cc} -O2 -pthread -o "$tmp/$c" "tests/programs/$c.c"; then
		echo "FAIL  $c.c does not build"
		exit 1
	fi
done
printf 'version: 1\ndefaults:\n  read_timeout: 1s\n  connect_timeout: 1s\n  attempts: 1\n' \
	>"$tmp/plain.yaml"
# The same with HTTP retries: the read waits inside the HTTP engine, whose
# state the close releases while that read still holds it.
printf 'version: 1\ndefaults:\n  read_timeout: 1s\nhosts:\n  - match: 127.0.0.1\n    http: {}\n' \
	>"$tmp/http.yaml"

# start NAME MODE: starts the peer; its port in $tmp/NAME.
start() {
	"$PEER" "$2" -b 10 -l 20000 >"$tmp/$1" &
	pids="$pids $!"
	i=0
	while ! grep -q '^[0-9][0-9]*$' "$tmp/$1" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}
start silent silent
start http http
# The new connection under a rule without read_timeout: the settings of
# the entry after the reuse cannot tell whose timer ended the kernel's
# wait (the blocked read returned EAGAIN).
printf 'version: 1\ndefaults:\n  read_timeout: 1s\nhosts:\n  - match: "127.0.0.1:%s"\n    read_timeout: off\n' \
	"$(cat "$tmp/http")" >"$tmp/split.yaml"
fail=0
# case_run LABEL POLICY A [late|connect]: one run of the client; ok when
# the blocked call fails with EBADF (A is how the client reports it) and
# the new connection keeps its bytes.
case_run() {
	label=$1 pol=$2 want=$3
	shift 3
	timeout 10 env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$tmp/$pol.yaml" \
		"$tmp/close_race_client" "$(cat "$tmp/silent")" "$(cat "$tmp/http")" "$@" \
		>"$tmp/out" 2>&1
	rc=$?
	got=$(tr '\n' ' ' <"$tmp/out")
	if grep -q '^reused no' "$tmp/out"; then
		echo "SKIPPED $label: the descriptor number was not reused ($got)"
		return
	fi
	if [ $rc -eq 0 ] && grep -q '^reused yes' "$tmp/out" &&
	    grep -q '^b 94$' "$tmp/out" &&
	    grep -q "^$want Bad file descriptor\$" "$tmp/out"; then
		echo "ok    $label: the blocked call fails; the new connection keeps its bytes: $got"
	else
		echo "FAIL  $label: $got (exit $rc)"
		fail=1
	fi
}
case_run "read timed by the kernel" plain a
case_run "read timed by the library's poll" plain a late
case_run "read waiting in the HTTP engine" http a
case_run "read waiting in the HTTP engine, late" http a late
# A connect still under way (its SYN dropped by a full accept queue) when
# the other thread closes: it reported the new connection's success as
# its own.
case_run "connect under way" plain "a connect" connect
case_run "read timed by the kernel, the new connection untimed" split a

# Reads entering the HTTP engine while the descriptor is closed, 2000
# times: the close freed the engine's state under the reading thread
# (ASan, in make asan, says so; a plain build may crash or not).
out=$(timeout 60 env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$tmp/http.yaml" \
	RESOLUTE_LOG=error "$tmp/close_enter_client" 2000 2>&1)
if [ "$out" = "done 2000" ]; then
	echo "ok    reads entering the HTTP engine while their descriptor is closed: $out"
else
	echo "FAIL  reads entering the HTTP engine while closed: $(echo "$out" | head -5)"
	fail=1
fi
exit $fail
