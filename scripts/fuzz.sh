#!/bin/sh
# SPDX-License-Identifier: MIT
# fuzz.sh - builds the libFuzzer targets under tests/fuzz/ and runs each one
# for a bounded time, starting from its seed corpus.
#
#   FUZZ_SECONDS=60 scripts/fuzz.sh [TARGET...]     (default: every target:
#                                                    policy, match, http)
#
# Targets are built with clang -fsanitize=fuzzer,address,undefined into
# $B/fuzz/.  The seed corpus (tests/fuzz/corpus/NAME) is only read; what the
# fuzzer discovers goes into $B/fuzz/corpus-NAME, crashes into $B/fuzz/.
# Exits non-zero on the first target that finds a crash, a leak or a hang.
set -u
cd "$(dirname "$0")/.." || exit 2
B=${B:-build}
FUZZ_CC=${FUZZ_CC:-clang}
secs=${FUZZ_SECONDS:-60}
out="$B/fuzz"
llhttp_src=${LLHTTP_SRC:-/usr/share/llhttp}
llhttp_inc=${LLHTTP_INC:-/usr/share/include/llhttp}
# Every pure module, as the Makefile takes them (the core links on its own).
srcs="$(echo src/core/*/*.c) src/core/policy/default_policy.S
$out/llhttp_llhttp.o $out/llhttp_api.o $out/llhttp_http.o"
san="-fsanitize=address,undefined -fno-sanitize-recover=all"
flags="-g -O1 -std=c11 -D_GNU_SOURCE $(for d in src/core/*/; do printf -- '-I%s ' "${d%/}"; done)-I$llhttp_inc -Wall -Wextra -Werror
-Wmissing-prototypes -fno-omit-frame-pointer -fsanitize=fuzzer $san"

if ! command -v "$FUZZ_CC" >/dev/null 2>&1; then
	echo "fuzz.sh: $FUZZ_CC not found (install clang and libclang-rt-14-dev)" >&2
	exit 1
fi
mkdir -p "$out"
# llhttp (the HTTP tracker's parser) is built once with its authors' code
# as it is, warnings off, and linked into every target.
for f in llhttp api http; do
	# shellcheck disable=SC2086 # flag list split on purpose
	$FUZZ_CC -g -O1 -DLLHTTP_STRICT_MODE=1 -I"$llhttp_inc" -w \
		-fsanitize=fuzzer-no-link $san -c -o "$out/llhttp_$f.o" \
		"$llhttp_src/$f.c" || exit 1
done
targets=${*:-$(for f in tests/fuzz/fuzz_*.c; do basename "$f" .c | sed 's/^fuzz_//'; done)}
for t in $targets; do
	echo "  FUZZ    $t (${secs}s)"
	# shellcheck disable=SC2086 # flag and source lists split on purpose
	$FUZZ_CC $flags -o "$out/fuzz_$t" "tests/fuzz/fuzz_$t.c" $srcs -lyaml ||
		exit 1
	mkdir -p "$out/corpus-$t"
	# One input may take at most 10 s (a hang fails); the runtime-limit
	# is the whole budget.  Leaks are checked at the end of each input.
	"$out/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-max_len=65536 -print_final_stats=1 \
		-artifact_prefix="$out/crash-$t-" \
		"$out/corpus-$t" "tests/fuzz/corpus/$t" >"$out/fuzz_$t.log" 2>&1
	rc=$?
	grep -E '^stat::number_of_executed_units|^Done' "$out/fuzz_$t.log" |
		sed 's/^/    /'
	if [ $rc -ne 0 ]; then
		echo "fuzz.sh: $t failed (exit $rc); see $out/fuzz_$t.log:" >&2
		grep -m5 -E 'ERROR|SUMMARY|Test unit written' "$out/fuzz_$t.log" >&2
		exit 1
	fi
done
echo "fuzz: all targets ran ${secs}s without a finding"
