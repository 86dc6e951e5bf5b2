#!/bin/sh
# SPDX-License-Identifier: MIT
# test_docs.sh - the README and doc/ stay true, and the build says what it
# lacks:
#   - the README is read in one sitting (at most 400 lines);
#   - every ```yaml block in README.md and doc/*.md is a whole policy that
#     `resolute check` accepts;
#   - every relative link in them names a file that exists;
#   - every make target the README names exists (make -n);
#   - every subcommand the README's command table names is one the command
#     knows;
#   - the library needs libc and libyaml at run time, nothing else (it is
#     loaded into programs that never asked for more);
#   - `make` without llhttp, libyaml's or cmocka's headers, where the build
#     looks for them, names the Debian packages and compiles nothing.
#
# Needs RS_CLI and RS_LIB as set by scripts/run-tests.sh (build/ otherwise).
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/programs/lib.sh
CLI=${RS_CLI:-$PWD/build/resolute}
# Under a sanitizer RS_LIB is its runtime and the library: the last word.
LIB=${RS_LIB:-$PWD/build/libresolute.so}
LIB=${LIB##* }
unset RESOLUTE_POLICY LD_PRELOAD
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
export ASAN_OPTIONS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0

lines=$(wc -l <README.md)
if [ "$lines" -le 400 ]; then ok "README.md has $lines lines"; else fail "README.md has $lines lines (> 400)"; fi

# Each ```yaml block of each document, one file per block, named after its
# document and first line, checked by the command.
n=0
for doc in README.md doc/*.md; do
	awk -v dir="$tmp" -v base="$(basename "$doc" .md)" '
		/^```yaml[ \t]*$/ { inblk = 1; k++; f = sprintf("%s/%s-%d.yaml", dir, base, k); start = NR; next }
		/^```/ && inblk { inblk = 0; close(f); print f ":" start; next }
		inblk { print > f }' "$doc" >"$tmp/blocks"
	while IFS=: read -r f start; do
		n=$((n + 1))
		if out=$("$CLI" check "$f" 2>&1); then
			ok "$doc:$start: policy block accepted"
		else
			fail "$doc:$start: resolute check rejects the policy block: $out"
		fi
	done <"$tmp/blocks"
done
[ "$n" -ge 4 ] || fail "only $n policy blocks found in README.md and doc/"

# Relative links: [text](path) and [text](path#anchor), not URLs.
for doc in README.md doc/*.md; do
	dir=$(dirname "$doc")
	grep -o '](\([^)#]*\)[^)]*)' "$doc" | sed 's/^](//; s/[#)].*$//' |
	    grep -v '^[a-z]*:' | grep -v '^$' | sort -u >"$tmp/links"
	while read -r link; do
		if [ -e "$dir/$link" ]; then :; else fail "$doc links to $link, which does not exist"; fi
	done <"$tmp/links"
done
ok "relative links of README.md and doc/ checked"

# The make targets of the README's code blocks (lines "    make X ...").
for target in $(grep -o '^    make [a-z][a-z-]*' README.md | awk '{ print $2 }' | sort -u); do
	if make -n "$target" >/dev/null 2>&1; then ok "make $target exists"; else fail "README names make $target, which make does not know"; fi
done

# The subcommands of the README's command table: each is known (an unknown
# one says "unknown command").
for sub in $(grep -o '^| `resolute [a-z]*' README.md | awk '{ print $3 }' | sort -u); do
	if "$CLI" "$sub" --no-such-option 2>&1 | grep -q 'unknown command'; then
		fail "README names resolute $sub, which the command does not know"
	else
		ok "resolute $sub is a command"
	fi
done

# Run-time dependencies of the library: exactly libc and libyaml.
needed=$(readelf -d "$LIB" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -v '^libasan\|^libubsan\|^libtsan\|^libstdc++\|^libm\.\|^libgcc_s' | sort | tr '\n' ' ')
if [ "$needed" = "libc.so.6 libyaml-0.so.2 " ]; then
	ok "the library needs libc and libyaml only"
else
	fail "the library needs: $needed(expected libc.so.6 libyaml-0.so.2)"
fi

# A build without its dependencies names them and compiles nothing.  The
# headers are hidden where the compiler finds them, in a mount namespace of
# this test's own (root only).
out=$(make --no-print-directory B="$tmp/b1" LLHTTP_INC=/nonexistent LLHTTP_SRC=/nonexistent all 2>&1)
if printf '%s\n' "$out" | grep -q 'node-llhttp' && printf '%s\n' "$out" | grep -q 'apt-get install' &&
    ! printf '%s\n' "$out" | grep -q 'error:' && [ ! -d "$tmp/b1/obj" ]; then
	ok "make without llhttp names node-llhttp and compiles nothing"
else
	fail "make without llhttp: $out"
fi
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	out=$(unshare -m sh -c 'mount --bind /dev/null /usr/include/yaml.h &&
		mount --bind /dev/null /usr/include/cmocka.h &&
		make --no-print-directory B="$1" all tests' sh "$tmp/b2" 2>&1)
	if printf '%s\n' "$out" | grep -q 'libyaml-dev' && ! printf '%s\n' "$out" | grep -q 'error:' &&
	    [ ! -d "$tmp/b2/obj" ]; then
		ok "make without <yaml.h> names libyaml-dev and compiles nothing"
	else
		fail "make without <yaml.h>: $out"
	fi
	out=$(unshare -m sh -c 'mount --bind /dev/null /usr/include/cmocka.h &&
		make --no-print-directory B="$1" tests' sh "$tmp/b3" 2>&1)
	if printf '%s\n' "$out" | grep -q 'libcmocka-dev' && ! printf '%s\n' "$out" | grep -q 'cmocka.h.*error'; then
		ok "make tests without <cmocka.h> names libcmocka-dev"
	else
		fail "make tests without <cmocka.h>: $out"
	fi
else
	echo "SKIPPED: hiding headers needs root and a mount namespace"
fi

[ "$fails" -eq 0 ] && echo "docs and build checks: all passed"
[ "$fails" -eq 0 ]
