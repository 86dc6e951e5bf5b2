#!/bin/sh
# SPDX-License-Identifier: MIT
# test_http_symbols.sh - the library's llhttp cannot meet a program's own:
# libresolute.so exports no llhttp or http_parser name, and a program that
# links its own llhttp (a non-strict build, exported with -rdynamic) parses
# with it under the library while the library's HTTP retries run too (a
# 503 then a 200 on one connection).
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${RS_BUILD:-$PWD/build}
LIB=${RS_LIB:-$B/libresolute.so}
lib=${LIB##* }
src=${LLHTTP_SRC:-/usr/share/llhttp}
inc=${LLHTTP_INC:-/usr/share/include/llhttp}
fail=0
if nm -D --defined-only "$lib" | grep -Ei 'llhttp|http_parser'; then
	echo "FAIL: libresolute.so exports llhttp names (above)"
	fail=1
else
	echo "ok    no llhttp or http_parser name is exported"
fi
[ -f "$src/llhttp.c" ] || { echo "SKIPPED: $src/llhttp.c missing"; exit $fail; }
tmp=$(mktemp -d /tmp/rs-http-sym-XXXXXX)
server_pid=""
trap '[ -n "$server_pid" ] && kill $server_pid 2>/dev/null; rm -rf "$tmp"' EXIT
${CC:-cc} -O1 -rdynamic -I"$inc" -w -o "$tmp/host" \
	tests/programs/http/host_llhttp.c "$src/llhttp.c" "$src/api.c" \
	"$src/http.c" || exit 1
python3 tests/programs/http_server.py --port-file "$tmp/port" \
	--lifetime 60 2>/dev/null &
server_pid=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
port=$(cat "$tmp/port")
printf 'version: 1\nhosts:\n  - match: 127.0.0.1\n    http: {}\n' >"$tmp/p.yaml"
out=$(timeout 20 env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$tmp/p.yaml" \
	RESOLUTE_LOG=info "$tmp/host" "$port" /t/sym/503/1/0/ka/cl 2>&1)
rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q '^status 200 body 9' &&
    echo "$out" | grep -q 'http 503 from'; then
	echo "ok    a program with its own llhttp parses the 200 the library retried for"
else
	echo "FAIL: exit $rc:"
	echo "$out" | sed 's/^/    | /'
	fail=1
fi
exit $fail
