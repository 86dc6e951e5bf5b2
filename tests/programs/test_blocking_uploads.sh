#!/bin/sh
# SPDX-License-Identifier: MIT
# test_blocking_uploads.sh - real programs upload a few MB over a blocking
# socket to a peer that accepts and reads nothing for STALL ms
# (stall_sink.py, a 4 KB receive buffer), so that their writes must block
# past the socket buffers; bare, and under the library with the default
# policy and with write_timeout 10s.  A case passes when the client exits
# 0, took at least STALL ms (it really blocked), and the peer got every
# byte, identical.  The library must never make such a write fail, return
# short, or send a message in part where the kernel's blocking call would
# not (sendmmsg with write_timeout did: two messages, the first cut).
#
# The C program's modes (upload_client.c) run bare once, with write: the
# kernel's blocking write is the same for each.  A client that is not
# installed is skipped, and said so.
# Environment: RS_LIB, RS_BUILD (set by scripts/run-tests.sh);
# RS_UPLOAD_CASES="name ..." runs only those cases.
set -u
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
here=$(dirname "$self")

# client NAME PORT FILE: one upload of FILE to 127.0.0.1:PORT.
client() {
	name=$1 port=$2 file=$3
	case $name in
	c-*)
		"$UPLOAD_CLIENT" "${name#c-}" "$port" "$file" ;;
	curl-telnet)
		curl -sS -T "$file" "telnet://127.0.0.1:$port" ;;
	py-sendall)
		"$PY" -c 'import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(open(sys.argv[2], "rb").read())
s.close()' "$port" "$file" ;;
	py-sendfile)
		"$PY" -c 'import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendfile(open(sys.argv[2], "rb"))
s.close()' "$port" "$file" ;;
	perl-print)
		perl -MIO::Socket::INET -e '
			my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1",
			    PeerPort => $ARGV[0], Proto => "tcp") or exit 2;
			open(my $f, "<", $ARGV[1]) or exit 2; binmode $f;
			local $/; my $d = <$f>;
			print $s $d or exit 3; close($s) or exit 3;' "$port" "$file" ;;
	java-*)
		java -Xshare:auto -XX:TieredStopAtLevel=1 -cp "$JAVA_CP" \
		    UploadClient "${name#java-}" "$port" "$file" ;;
	*)
		echo "no client $name" >&2
		return 2 ;;
	esac
}

if [ "${1:-}" = --client ]; then
	client "$2" "$3" "$4"
	exit
fi

cd "$here/../.." || exit 2
RS_BUILD=${RS_BUILD:-$PWD/build}
RS_LIB=${RS_LIB:-$RS_BUILD/libresolute.so}
STALL=${RS_UPLOAD_STALL_MS:-150}
. "$here/lib.sh"
tmp=$(mktemp -d /tmp/rs-uploads-XXXXXX)
chmod 0755 "$tmp"
sink_pid=""
cleanup() {
	[ -n "$sink_pid" ] && kill "$sink_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
fails=0 passes=0

# The upload must be larger than what both socket buffers hold, or no
# write blocks.  In a private network namespace (scripts/netns.sh) the
# send buffer's ceiling is lowered from 4 MB to 128 KB, so that a few
# hundred KB suffice; elsewhere the host's is left alone and it takes MBs.
if [ "${RS_NETNS:-}" = 1 ] &&
    sysctl -qw net.ipv4.tcp_wmem="4096 16384 131072" 2>/dev/null; then
	bytes=600000
else
	bytes=4500000
fi
# Text (base64), so that telnet's escaping of byte 255 cannot change it.
head -c "${RS_UPLOAD_BYTES:-$bytes}" /dev/urandom | base64 -w 76 \
    >"$tmp/payload"
size=$(wc -c <"$tmp/payload" | tr -d ' ')
sum=$(sha256sum "$tmp/payload" | cut -d' ' -f1)
printf 'version: 1\n' >"$tmp/default.yaml"
printf 'version: 1\ndefaults:\n  write_timeout: 10s\n' >"$tmp/wt.yaml"

if ! ${CC:-cc} -O2 -D_FORTIFY_SOURCE=2 -o "$tmp/upload_client" \
    "$here/upload_client.c"; then
	echo "FAIL  upload_client.c does not build"
	exit 1
fi
export UPLOAD_CLIENT="$tmp/upload_client"
# The interpreter itself: a version manager's shim costs ~0.3 s a start.
PY=$(python3 -c 'import sys; print(sys.executable)') || exit 2
export PY

# One peer for every case: it takes one connection after another and
# appends a line to $tmp/result for each.
"$PY" "$here/stall_sink.py" "$tmp/port" "$STALL" "$tmp/result" "$size" \
    2>>"$tmp/sink.err" &
sink_pid=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
[ -s "$tmp/port" ] || { echo "FAIL  stall_sink did not start"; exit 1; }
port=$(cat "$tmp/port")
: >>"$tmp/result"

# result N: the peer's Nth line (what it got from the Nth connection,
# once it read to the end), or "none" if that connection never came.
result() {
	i=0
	while [ "$(wc -l <"$tmp/result")" -lt "$1" ] && [ $i -lt 100 ]; do
		sleep 0.02
		i=$((i + 1))
	done
	sed -n "${1}p" "$tmp/result" | grep . || echo none
}

# run NAME VARIANT: one upload, judged.
run() {
	name=$1 variant=$2
	seen=$(($(wc -l <"$tmp/result") + 1))
	start=$(now_ms)
	case $variant in
	bare)
		timeout 20 sh "$self" --client "$name" "$port" "$tmp/payload" \
		    >"$tmp/out" 2>&1 ;;
	*)
		timeout 20 env LD_PRELOAD="$RS_LIB" \
		    RESOLUTE_POLICY="$tmp/$variant.yaml" \
		    sh "$self" --client "$name" "$port" "$tmp/payload" \
		    >"$tmp/out" 2>&1 ;;
	esac
	rc=$?
	took=$(($(now_ms) - start))
	got=$(result "$seen")
	what="$name $variant: rc $rc, ${took} ms, peer got ${got%% *} of $size"
	if [ $rc -eq 0 ] && [ "$took" -ge "$STALL" ] &&
	    [ "$got" = "$size $sum" ]; then
		ok "$what"
		passes=$((passes + 1))
	else
		fail "$what; $(tr '\n' ' ' <"$tmp/out" | head -c 300)"
	fi
}

# need CMD NAME: 0 if CMD is installed, else says NAME is skipped.
need() {
	command -v "$1" >/dev/null && return 0
	echo "skipped: $2 ($1 not installed)"
	return 1
}

CASES=${RS_UPLOAD_CASES:-"c-write c-send c-writev c-sendmsg c-sendmmsg
c-sendfile c-splice c-fdopen c-dprintf c-fork c-exec c-system
py-sendall py-sendfile perl-print java-stream java-transfer curl-telnet"}

for name in $CASES; do
	case $name in
	c-*) ;;
	py-*) ;;
	perl-*) need perl "$name" || continue ;;
	curl-*)
		need curl "$name" || continue
		# make asan preloads the sanitizer's runtime first: with it
		# alone (no library), curl's telnet upload never ends.
		if [ "$RS_LIB" != "${RS_LIB##* }" ]; then
			echo "skipped: $name (hangs under the sanitizer runtime alone)"
			continue
		fi ;;
	java-*)
		need javac "$name" || continue
		[ -f "$tmp/UploadClient.class" ] ||
		    javac -d "$tmp" "$here/UploadClient.java" || {
			fail "UploadClient.java does not build"; continue; }
		export JAVA_CP="$tmp" ;;
	esac
	bare=bare
	case $name in
	c-write) ;;
	c-*) bare="" ;;
	esac
	for variant in $bare default wt; do
		run "$name" "$variant"
	done
done

echo "blocking uploads: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
