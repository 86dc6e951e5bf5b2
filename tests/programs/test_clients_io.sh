#!/bin/sh
# SPDX-License-Identifier: MIT
# test_clients_io.sh - real clients against servers that go quiet, under a
# policy with read_timeout 1s: each must give up near 1 s instead of hanging
# (and, without the library, must still be hanging after 3 s, or the case
# proves nothing).  Also a 200 MB download must arrive byte-identical.
#
# Clients that wait in poll/epoll (curl, nc, wget's default, python with a
# socket timeout, asyncio, node) get their timeout from the wait engine
# (src/preload/wait/wait.c, epollwait.c); the others from blocking reads
# (io/io.c).
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${RS_BUILD:-$PWD/build}
LIB=${RS_LIB:-$B/libresolute.so}
PEER=$B/itests/peer
SLACK=$((2000 + ${RS_SLACK_MS:-0}))
[ -x "$PEER" ] || { echo "SKIPPED: $PEER not built (make tests)"; exit 0; }
tmp=$(mktemp -d /tmp/rs-clients-io-XXXXXX)
policy=$tmp/policy.yaml
printf 'version: 1\ndefaults:\n  read_timeout: 1s\n' >"$policy"
peer_pid=""
cleanup() {
	[ -n "$peer_pid" ] && kill "$peer_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fails=0 passes=0 any_status=0

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# peer MODE [ARGS]: (re)starts the peer; sets $port.
peer() {
	[ -n "$peer_pid" ] && kill "$peer_pid" 2>/dev/null
	# A fresh file each time: the background shell truncates it later
	# than this one looks at it.
	rm -f "$tmp/port"
	"$PEER" "$@" -l 300000 >"$tmp/port.new" &
	peer_pid=$!
	i=0
	while ! grep -q '^[0-9][0-9]*$' "$tmp/port.new" 2>/dev/null &&
	    [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	mv "$tmp/port.new" "$tmp/port"
	port=$(cat "$tmp/port")
	[ -n "$port" ] || { echo "peer $1 did not start"; exit 1; }
}

# case NAME CMD...: CMD (bounded by timeout 20) must fail between 1000
# and 1000+SLACK ms under the library (from its start, or from its
# "start" line), and still be running after 3 s without it.  The run without the library goes beside the timed one, on a
# connection of its own (the peer serves each on a thread): it only has to
# outlast its 3 s, and run after the timed one it added those 3 s to each
# of the 16 cases.  It starts half a second ahead, so that its start-up
# (python3, node) is over and takes no CPU from the timed run's window.
# With any_status=1 any exit counts: OpenBSD nc ends with status 0 when
# reading from the network fails.
case_timeout() {
	name=$1 bound=20
	shift
	timeout 3 "$@" >/dev/null 2>&1 &
	bare_pid=$!
	sleep 0.5
	start=$(now_ms)
	timeout $bound env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$policy" "$@" \
		>"$tmp/out" 2>&1
	rc=$?
	end=$(now_ms)
	cs=$(sed -n 's/^start \([0-9][0-9]*\)$/\1/p' "$tmp/out" | head -1)
	ms=$((end - ${cs:-$start}))
	wait $bare_pid
	bare=$?
	if { [ $rc -ne 0 ] || [ "$any_status" = 1 ]; } &&
	    [ $rc -ne 124 ] && [ $ms -ge 1000 ] &&
	    [ $ms -lt $((1000 + SLACK)) ] && [ $bare -eq 124 ]; then
		echo "ok    $name: exit $rc after $ms ms (hangs without: yes)"
		passes=$((passes + 1))
	else
		echo "FAIL  $name: exit $rc after $ms ms, without library: $bare"
		sed 's/^/    | /' "$tmp/out" | tail -5
		fails=$((fails + 1))
	fi
}

url() { echo "http://127.0.0.1:$port/"; }

# The interpreted clients print "start EPOCH_MS" once started, before they
# connect: the window counts from there (case_timeout), for under a
# sanitizer on a loaded machine python3's start-up alone takes seconds.
PY_BLOCK='import socket,sys,time
print("start %d"%(time.time()*1000),flush=True)
s=socket.create_connection(("127.0.0.1",int(sys.argv[1])))
s.sendall(b"GET / HTTP/1.0\r\n\r\n")
while s.recv(65536): pass'
PY_TMO='import socket,sys,time
print("start %d"%(time.time()*1000),flush=True)
s=socket.create_connection(("127.0.0.1",int(sys.argv[1])))
s.settimeout(30)
s.sendall(b"GET / HTTP/1.0\r\n\r\n")
while s.recv(65536): pass'
PY_ASYNC='import asyncio,sys,time
async def main():
    print("start %d"%(time.time()*1000),flush=True)
    r,w=await asyncio.open_connection("127.0.0.1",int(sys.argv[1]))
    w.write(b"GET / HTTP/1.0\r\n\r\n")
    while await r.read(65536): pass
asyncio.run(main())'
NODE='console.log("start "+Date.now());
const s=require("net").connect(+process.argv[1],"127.0.0.1",()=>s.write("GET / HTTP/1.0\r\n\r\n"));
s.on("data",()=>{});s.on("error",e=>{console.error(e.code);process.exit(1)});s.on("end",()=>process.exit(0))'

# shellcheck source=tests/programs/sanitizer.sh
. tests/programs/sanitizer.sh
curl_ok=0
usable curl --version && curl_ok=1

for mode in silent stall; do
	peer "$mode" -b 100000
	case_timeout "$mode/python3 blocking recv" \
		python3 -c "$PY_BLOCK" "$port"
	case_timeout "$mode/wget -T 0 (blocking reads)" \
		wget -q --tries=1 -T 0 -O /dev/null "$(url)"
	case_timeout "$mode/wget --tries=1" \
		wget -q --tries=1 -O /dev/null "$(url)"
	[ $curl_ok = 1 ] &&
		case_timeout "$mode/curl" curl -s -o /dev/null "$(url)"
	any_status=1
	case_timeout "$mode/nc" sh -c "printf 'GET / HTTP/1.0\r\n\r\n' |
		nc 127.0.0.1 $port >/dev/null"
	any_status=0
	case_timeout "$mode/python3 settimeout(30)" \
		python3 -c "$PY_TMO" "$port"
	case_timeout "$mode/python3 asyncio" python3 -c "$PY_ASYNC" "$port"
	if command -v node >/dev/null 2>&1; then
		case_timeout "$mode/node" node -e "$NODE" "$port"
	fi
done

# 200 MB through the library, compared byte for byte (with python3 where
# curl cannot run, under a sanitizer).
size=209715200
peer http -b $size
head -c $size /dev/zero | tr '\0' x >"$tmp/want"
if [ $curl_ok = 1 ]; then
	fetch="curl -s -o $tmp/got $(url)"
else
	fetch="python3 -c 'import shutil,sys,urllib.request as u; shutil.copyfileobj(u.urlopen(sys.argv[1]), open(sys.argv[2], \"wb\"))' $(url) $tmp/got"
fi
if timeout 60 env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$policy" \
	sh -c "$fetch" && cmp -s "$tmp/want" "$tmp/got"; then
	echo "ok    200 MB download byte-identical (${fetch%% *})"
	passes=$((passes + 1))
else
	echo "FAIL  200 MB download: $(stat -c %s "$tmp/got" 2>/dev/null) bytes"
	fails=$((fails + 1))
fi

echo "clients_io: $passes passed, $fails failed"
[ $fails -eq 0 ]
