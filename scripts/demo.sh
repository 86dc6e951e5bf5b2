#!/bin/sh
# SPDX-License-Identifier: MIT
# demo.sh - curl against a flaky server, without and with resolute.
#
# Act 1: a server that refuses connections for a moment (it is restarting).
# Act 2: a host that silently drops SYNs (needs root: a private network
#        namespace where nftables drops them; skipped otherwise).
# Everything runs on this machine, on 127.0.0.0/8, and ends by itself.
#
# RS_DEMO_INSTALLED=1 runs the installed command (`resolute` on PATH),
# which finds the library where it was installed (the package check in
# .ci/run); RS_DEMO_POLICY=FILE writes the demo's policy there and keeps
# it, so that `resolute stats --policy FILE` shows its counters afterwards.
set -u
cd "$(dirname "$0")/.." || exit 2
B=${B:-build}
PEER="$PWD/$B/itests/peer"
if [ "${RS_DEMO_INSTALLED:-}" = 1 ]; then
	RESOLUTE=$(command -v resolute) || { echo "demo: no resolute on PATH" >&2; exit 2; }
	LIBENV=""
else
	RESOLUTE="$PWD/$B/resolute"
	LIBENV="RESOLUTE_LIB=$PWD/$B/libresolute.so"
fi
if [ -n "${RS_DEMO_POLICY:-}" ]; then
	POLICY=$RS_DEMO_POLICY
	trap 'kill $peer 2>/dev/null' EXIT INT TERM
else
	POLICY=$(mktemp /tmp/resolute-demo-XXXXXX.yaml)
	trap 'rm -f "$POLICY"; kill $peer 2>/dev/null' EXIT INT TERM
fi
peer=""

if [ "${RS_NETNS:-}" != 1 ] && [ "$(id -u)" = 0 ] &&
    unshare -n true 2>/dev/null && command -v nft >/dev/null 2>&1; then
	exec scripts/netns.sh "$0" "$@"
fi

cat >"$POLICY" <<'YAML'
version: 1
defaults:
  connect_timeout: 1s
  attempts: 6
  backoff: { base: 200ms, cap: 2s }
  connect_budget: 8s
YAML

say() { printf '\n\033[1m%s\033[0m\n' "$*"; }
ms() { date +%s%3N; }

# Starts a server that refuses for $1 ms, then answers HTTP.
flaky() {
	portfile=$(mktemp)
	"$PEER" late -d "$1" -l 20000 -b 12 >"$portfile" &
	peer=$!
	i=0
	while [ ! -s "$portfile" ] && [ $i -lt 50 ]; do sleep 0.05; i=$((i + 1)); done
	port=$(cat "$portfile")
	rm -f "$portfile"
}

say "Act 1: the server is restarting (refuses connections for 1.5 s)"
flaky 1500
say "\$ curl http://127.0.0.1:$port/          # without resolute"
t0=$(ms)
curl -sS "http://127.0.0.1:$port/"
echo "   -> curl exit $?, after $(( $(ms) - t0 )) ms"
kill $peer 2>/dev/null; wait $peer 2>/dev/null

flaky 1500
say "\$ resolute run --policy demo.yaml -- curl http://127.0.0.1:$port/"
sed 's/^/   | /' "$POLICY"
t0=$(ms)
# The body goes to a file: the library's exit summary is written before
# curl's standard output is flushed, and would run into it.
body=$(mktemp)
timeout 20 env ${LIBENV:+"$LIBENV"} "$RESOLUTE" run --policy "$POLICY" --log info -- \
	curl -sS -o "$body" "http://127.0.0.1:$port/"
echo "   -> curl exit $?, after $(( $(ms) - t0 )) ms, body: $(cat "$body")"
rm -f "$body"
kill $peer 2>/dev/null; wait $peer 2>/dev/null

if [ "${RS_NETNS:-}" != 1 ]; then
	say "Act 2 skipped: dropping SYNs needs root (a private network namespace)."
	exit 0
fi
say "Act 2: a host that drops every SYN (127.0.0.2, blackholed in a private namespace)"
say "\$ curl http://127.0.0.2/                 # without resolute (the demo stops it after 6 s)"
t0=$(ms)
timeout 6 curl -sS http://127.0.0.2/
rc=$?
[ $rc = 124 ] && echo "   -> still hanging after 6 s (curl's own connect timeout is 5 minutes)" ||
	echo "   -> curl exit $rc, after $(( $(ms) - t0 )) ms"

cat >"$POLICY" <<'YAML'
version: 1
defaults:
  connect_timeout: 1s
  attempts: 2
  backoff: { base: 200ms }
YAML
say "\$ resolute run --policy fast-fail.yaml -- curl http://127.0.0.2/"
sed 's/^/   | /' "$POLICY"
t0=$(ms)
timeout 20 env ${LIBENV:+"$LIBENV"} "$RESOLUTE" run --policy "$POLICY" -- curl -sS http://127.0.0.2/
echo "   -> curl exit $?, after $(( $(ms) - t0 )) ms: fails fast, with the reason logged"
