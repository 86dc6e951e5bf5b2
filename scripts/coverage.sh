#!/bin/sh
# SPDX-License-Identifier: MIT
# coverage.sh - line coverage of src/ from the unit and engine tests alone
# (no preloading, no network), per file, then the engines' totals checked
# against a floor.  Run by `make coverage` after an instrumented build in
# $B (build-cov) and a run of `scripts/run-tests.sh unit` there.
#
# The engines are the preload files that decide what a connect, a read or
# write, or a wait does: src/preload/connect/, io/io*, wait/ and the epoll
# instances (state/epollinst.c), and the helpers split from them
# (state/dest, sigrestart, sotimeo); and the request layer: the HTTP
# engines (src/preload/http/), the resolver retries (names/resolve.c) and
# the thread's deadline (state/tdeadline.c).  Each group must
# keep at least COVERAGE_FLOOR percent (70) of its lines covered, the
# request layer REQUEST_FLOOR (85; it is at 91%).
set -u
cd "$(dirname "$0")/.." || exit 2
B=${B:-build-cov}
FLOOR=${COVERAGE_FLOOR:-70}
REQUEST_FLOOR=${REQUEST_FLOOR:-85}
json=$(mktemp)
trap 'rm -f "$json"' EXIT

gcovr --root . --object-directory "$B/obj" --filter 'src/' \
	--json-summary "$json" >/dev/null || exit 1
exec python3 - "$json" "$FLOOR" "$REQUEST_FLOOR" <<'PY'
import json, re, sys

data = json.load(open(sys.argv[1]))
floor = float(sys.argv[2])
groups = [
    ('connect', r'src/preload/(connect/\w+|state/(dest|sigrestart|sotimeo))\.c$',
     floor),
    ('read/write', r'src/preload/io/io\w*\.c$', floor),
    ('wait', r'src/preload/(wait/\w+|state/epollinst)\.c$', floor),
    ('request', r'src/preload/(http/\w+|names/resolve|state/tdeadline)\.c$',
     float(sys.argv[3])),
]
files = sorted(data['files'], key=lambda f: f['filename'])
print('%-36s %7s %7s %6s' % ('file', 'lines', 'covered', '%'))
for f in files:
    print('%-36s %7d %7d %5.1f%%' % (f['filename'], f['line_total'],
          f['line_covered'], f['line_percent']))
print('%-36s %7d %7d %5.1f%%' % ('all of src/', data['line_total'],
      data['line_covered'], data['line_percent']))
print()
bad = 0
for name, pattern, need in groups:
    mine = [f for f in files if re.match(pattern, f['filename'])]
    total = sum(f['line_total'] for f in mine)
    covered = sum(f['line_covered'] for f in mine)
    pct = 100.0 * covered / total if total else 0.0
    ok = pct >= need
    bad |= not ok
    print('%-10s engine: %5.1f%% of %d lines (%s)%s' % (name, pct, total,
          ', '.join(f['filename'].split('/')[-1] for f in mine),
          '' if ok else '  BELOW %.0f%%' % need))
sys.exit(1 if bad else 0)
PY
