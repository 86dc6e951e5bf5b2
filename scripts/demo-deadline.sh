#!/bin/sh
# SPDX-License-Identifier: MIT
# demo-deadline.sh - `make demo-deadline`: the chain of issue 16 run bare
# and under the library (scripts/deadline-chain.sh), with its timelines.
set -u
cd "$(dirname "$0")/.." || exit 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat <<'TXT'
client --(deadline 500ms)--> A --> B --> C --> silent backend
  (A, B, C: unmodified python3 http.server ThreadingHTTPServer + urllib,
   each works 60 ms before calling the next hop; times below are ms
   relative to the client's deadline)

TXT
echo "== bare: only the client runs under resolute"
SETTLE_S=3 sh scripts/deadline-chain.sh bare "$dir/bare" &&
	python3 tests/programs/deadline_timeline.py "$dir/bare"
echo "   C's own log, seconds after the client gave up:"
sort -n "$dir/bare/events" | grep ' C ' | sed 's/^/     /'
echo
echo "== library: each service started with inbound_deadline + deadline_header"
SETTLE_S=1 sh scripts/deadline-chain.sh library "$dir/lib" &&
	python3 tests/programs/deadline_timeline.py "$dir/lib"
echo "   what the library logged:"
cat "$dir"/lib/resolute-[ABC].log | grep -v '^$' | sed 's/^/     /'
