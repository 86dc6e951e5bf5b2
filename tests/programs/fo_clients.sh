# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# fo_clients.sh - sourced by the failover and DNS-retry tests: real clients
# that resolve a name and connect to it, one at a time.
#
# fo_client NAME HOST PORT: runs client NAME once against http://HOST:PORT/
# (its output on stdout); 0 on a 200 answer.  The callers bound each run
# with timeout(1).  FO_JAVA_DIR holds the compiled FoClient.class.  The
# interpreted clients (python3, asyncio, node, java) first print "start
# EPOCH_MS" (fo_start_ms reads it): their start-up, seconds under a
# sanitizer on a loaded machine, is not what the callers time.
fo_client() {
	case $1 in
	c-hostent) "$RS_BUILD/itests/fo_client" hostent "$2" "$3" ;;
	c-gai) "$RS_BUILD/itests/fo_client" gai "$2" "$3" ;;
	c-loop) "$RS_BUILD/itests/fo_client" loop "$2" "$3" -t 1500 ;;
	curl)
		curl -sS -o /dev/null -w '%{http_code}\n' \
		    "http://$2:$3/" | grep -q '^200$' ;;
	wget)
		wget -q -t 1 -O /dev/null "http://$2:$3/" ;;
	python3)
		python3 - "$2" "$3" <<'PY'
import socket, sys, time
print("start %d" % (time.time() * 1000), flush=True)
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
s.sendall(b"GET / HTTP/1.0\r\n\r\n")
sys.exit(0 if b" 200 " in s.recv(4096) else 1)
PY
		;;
	asyncio)
		python3 - "$2" "$3" <<'PY'
import asyncio, sys, time
async def main():
    print("start %d" % (time.time() * 1000), flush=True)
    r, w = await asyncio.open_connection(sys.argv[1], int(sys.argv[2]))
    w.write(b"GET / HTTP/1.0\r\n\r\n")
    return b" 200 " in await r.read(4096)
sys.exit(0 if asyncio.run(main()) else 1)
PY
		;;
	node)
		node -e '
console.log("start " + Date.now());
require("http").get({host: process.argv[1], port: +process.argv[2]},
    (res) => process.exit(res.statusCode === 200 ? 0 : 1))
    .on("error", (e) => { console.log(e.code); process.exit(1); });
' "$2" "$3" ;;
	java)
		java -Xshare:auto -XX:TieredStopAtLevel=1 -cp "$FO_JAVA_DIR" \
		    FoClient "$2" "$3" ;;
	esac
}

# shellcheck disable=SC2034 # used by the scripts that source this file
FO_CLIENTS="c-hostent c-gai c-loop curl wget python3 asyncio node java"

# fo_available NAME: whether client NAME can run here.
fo_available() {
	case $1 in
	c-*) [ -x "$RS_BUILD/itests/fo_client" ] ;;
	asyncio) command -v python3 >/dev/null ;;
	curl) command -v curl >/dev/null && usable curl --version ;;
	java) [ -f "$FO_JAVA_DIR/FoClient.class" ] && usable java -version ;;
	*) command -v "$1" >/dev/null ;;
	esac
}

# fo_build_java DIR: compiles FoClient.java into DIR (skipped without javac).
fo_build_java() {
	FO_JAVA_DIR=$1
	command -v javac >/dev/null &&
	    javac -d "$1" tests/programs/FoClient.java 2>/dev/null
}

# pass MESSAGE, fail MESSAGE [FILE...]: count a result and say it; a
# failure shows the files.  The caller prints the counts at the end.
passes=0 fails=0
pass() {
	passes=$((passes + 1))
	echo "ok    $*"
}

fail() {
	fails=$((fails + 1))
	echo "FAIL  $1"
	shift
	for f in "$@"; do
		[ -f "$f" ] && sed "s#^#    | $(basename "$f"): #" "$f"
	done
}

fo_now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# fo_start_ms FILE DEFAULT: the time in a client's "start" line in FILE,
# else DEFAULT.
fo_start_ms() {
	fo_s=$(sed -n 's/^start \([0-9][0-9]*\)$/\1/p' "$1" | head -1)
	echo "${fo_s:-$2}"
}
