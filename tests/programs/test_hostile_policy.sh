#!/bin/sh
# SPDX-License-Identifier: MIT
# test_hostile_policy.sh - hostile policy files never break a real program
# (SPEC §3, §8): with RESOLUTE_STRICT=1 it stops at start-up with status 78
# and the errors logged; otherwise the errors are logged once and every
# call passes through, so the program works exactly as without the library.
#
# Hostile: over 1 MiB, deeply nested, binary garbage, a directory, a FIFO
# (which must not block the program), a file unreadable for the user
# (chmod 000, run as nobody; root reads anything).  The program is python3
# making three connections and an HTTP request to the peer.
# Needs RS_LIB and RS_BUILD (scripts/run-tests.sh).
set -u
RS_BUILD=${RS_BUILD:-$PWD/build}
RS_LIB=${RS_LIB:-$RS_BUILD/libresolute.so}
command -v python3 >/dev/null 2>&1 || { echo "SKIPPED: no python3"; exit 0; }
# nobody cannot use an interpreter under /root (pyenv): prefer the system one.
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
tmp=$(mktemp -d)
chmod 755 "$tmp"
fails=0
peer_pid=
cleanup() {
	[ -n "$peer_pid" ] && kill "$peer_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	sed 's/^/    | /' "$tmp/err" "$tmp/out" 2>/dev/null
	fails=$((fails + 1))
}

"$RS_BUILD/itests/peer" http >"$tmp/port" &
peer_pid=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$tmp/port")
cat >"$tmp/client.py" <<PY
import socket
for _ in range(3):
    socket.create_connection(("127.0.0.1", $port), timeout=5).close()
s = socket.create_connection(("127.0.0.1", $port), timeout=5)
s.sendall(b"GET / HTTP/1.0\r\nHost: peer\r\n\r\n")
data = b""
while True:
    b = s.recv(4096)
    if not b:
        break
    data += b
print("status", data.split(b"\r\n", 1)[0].decode())
PY

# The hostile files.
python3 -c 'import sys; sys.stdout.write("version: 1\n# " + "x" * (1 << 20) + "\n")' \
	>"$tmp/huge.yaml"
python3 -c 'print("version: 1\ndefaults:\n  backoff: " + "[" * 100000 + "]" * 100000)' \
	>"$tmp/nested.yaml"
head -c 65536 /dev/urandom >"$tmp/garbage.yaml"
printf 'version: 1\ndefaults:\n  atempts: 3\n' >"$tmp/typo.yaml"
mkdir "$tmp/dir.yaml"
mkfifo "$tmp/fifo.yaml"
printf 'version: 1\n' >"$tmp/unreadable.yaml"
chmod 000 "$tmp/unreadable.yaml"

# run POLICY STRICT [AS_NOBODY]: python3 under the library, 10 s at most.
run() {
	if [ "${3:-}" = nobody ]; then
		set -- "$1" "$2" setpriv --reuid=nobody --regid=nogroup \
			--clear-groups --
	else
		set -- "$1" "$2"
	fi
	pol=$1 strict=$2
	shift 2
	timeout 10 env LD_PRELOAD="$RS_LIB" RESOLUTE_POLICY="$pol" \
		RESOLUTE_STRICT="$strict" "$@" "$py" "$tmp/client.py" \
		>"$tmp/out" 2>"$tmp/err"
}

# check NAME [nobody]: fail-open, then strict.
check() {
	name=$1
	run "$tmp/$name" 0 "${2:-}"
	rc=$?
	if [ $rc -ne 0 ] || ! grep -q 'status HTTP/1.[01] 200' "$tmp/out"; then
		fail "$name: fail-open run exited $rc (124: it blocked)"
	elif [ "$(grep -c 'passing every call through' "$tmp/err")" -ne 1 ]; then
		fail "$name: fail-open must log the errors exactly once"
	elif ! grep -q "$name.*error" "$tmp/err"; then
		fail "$name: no error naming the file was logged"
	fi
	run "$tmp/$name" 1 "${2:-}"
	rc=$?
	if [ $rc -ne 78 ]; then
		fail "$name: strict run exited $rc, want 78"
	elif ! grep -q "$name.*error" "$tmp/err" ||
		grep -q 'status HTTP' "$tmp/out"; then
		fail "$name: strict run must log the error and stop at start-up"
	fi
}

for f in huge.yaml nested.yaml garbage.yaml typo.yaml dir.yaml fifo.yaml; do
	check "$f"
done
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
		test -r "${RS_LIB##* }" -a -x "$py"; then
	check unreadable.yaml nobody
	grep -q 'Permission denied' "$tmp/err" ||
		fail "unreadable.yaml: the reason (permission denied) is not logged"
else
	echo "note: unreadable policy not tested (needs root, setpriv and a" \
		"library readable by nobody)"
fi

# The control: a valid policy, strict, works and logs nothing.
printf 'version: 1\n' >"$tmp/good.yaml"
run "$tmp/good.yaml" 1
if [ $? -ne 0 ] || [ -s "$tmp/err" ]; then
	fail "good.yaml: a valid policy under strict mode must just work"
fi

[ $fails -eq 0 ] && echo "hostile policies: all passed"
[ $fails -eq 0 ]
