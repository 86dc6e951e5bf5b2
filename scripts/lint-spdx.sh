#!/bin/sh
# SPDX-License-Identifier: MIT
# lint-spdx.sh - every source file of the project says its licence in an
# SPDX tag near its top (within its first three lines: after a shebang),
# so that a file copied out of the tree still carries it.  `--fix` adds the
# tag to files that lack it, in the comment syntax of their kind.
# Run by `make lint`.
set -u
cd "$(dirname "$0")/.." || exit 2
TAG="SPDX-License-Identifier: MIT"
fix=0
[ "${1:-}" = --fix ] && fix=1
bad=0
# The project's own sources: C, assembler, shell, python, Java, JavaScript,
# the Makefile and CI's entry point.  Policies, fixtures and corpora are
# data, not sources.
files=$(git ls-files 'src/*' 'tests/*' 'bench/*' 'scripts/*' .ci/run Makefile 2>/dev/null |
	grep -E '\.(c|h|S|sh|py|java|js)$|^\.ci/run$|^Makefile$' |
	grep -v '^tests/fuzz/corpus/\|^tests/fixtures/')
for f in $files; do
	[ -f "$f" ] || continue
	head -n 3 "$f" | grep -q "$TAG" && continue
	if [ $fix = 0 ]; then
		echo "lint-spdx: $f has no '$TAG' in its first three lines" >&2
		bad=1
		continue
	fi
	case "$f" in
	*.c | *.h | *.S) line="/* $TAG */" ;;
	*.java | *.js) line="// $TAG" ;;
	*) line="# $TAG" ;;
	esac
	if head -n 1 "$f" | grep -q '^#!'; then
		{ head -n 1 "$f"; echo "$line"; tail -n +2 "$f"; } >"$f.spdx"
	else
		{ echo "$line"; cat "$f"; } >"$f.spdx"
	fi
	chmod --reference="$f" "$f.spdx" && mv "$f.spdx" "$f"
done
[ $bad = 0 ] && [ $fix = 0 ] && echo "lint-spdx: ok"
exit $bad
