#!/bin/sh
# bench-ir.sh - user-space instructions per operation, with and without the
# library: callgrind's Ir count (exact and repeatable, unlike time on a
# shared machine) of a run of N operations subtracted from one of 2N, so
# that start-up (the policy parse, symbol resolution) cancels out.  Each
# process is counted apart: the benchmark's peer is a fork, under the
# library too.  The clock reads themselves do not show: valgrind replaces
# the vDSO with a system call, so add their cost (about 25 ns for
# CLOCK_MONOTONIC, 5 ns for CLOCK_MONOTONIC_COARSE) by hand.
#
#   scripts/bench-ir.sh                 (the rows below)
#   BENCH_LIB=other/libresolute.so scripts/bench-ir.sh
set -u
cd "$(dirname "$0")/.." || exit 2
B=${B:-build}
CC=${CC:-cc}
LIB=${BENCH_LIB:-$PWD/$B/libresolute.so}
die() { echo "bench-ir: $*" >&2; exit 2; }
command -v valgrind >/dev/null 2>&1 || die "valgrind missing"
[ -f "$LIB" ] || die "$LIB missing; run make first"
mkdir -p "$B/bench"
for p in pingpong fdio connects; do
	[ -n "$(find "$B/bench/$p" -newer "bench/$p.c" 2>/dev/null)" ] &&
		continue
	$CC -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -o "$B/bench/$p" \
		"bench/$p.c" -lpthread || exit 2
done
tmp=$(mktemp -d /tmp/rs-bench-ir-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
printf 'version: 1\ndefaults:\n  read_timeout: 5s\n  write_timeout: 5s\n' \
	>"$tmp/rw5s.yaml"
cp policy/default.yaml "$tmp/default.yaml"

# ir POLICY N PROG ARGS...: the Ir of each process of one run ("" for
# bare), smallest pid (the benchmark itself) first.
ir() {
	ir_pol=$1 ir_n=$2
	shift 2
	rm -f "$tmp"/cg.*
	if [ -n "$ir_pol" ]; then
		env LD_PRELOAD="$LIB" RESOLUTE_POLICY="$tmp/$ir_pol.yaml" \
		    RESOLUTE_LOG=error valgrind --tool=callgrind \
		    --callgrind-out-file="$tmp/cg.%p" "$@" "$ir_n" \
		    >/dev/null 2>&1
	else
		valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.%p" \
		    "$@" "$ir_n" >/dev/null 2>&1
	fi
	for f in $(cd "$tmp" && ls cg.* | sort -t. -k2 -n); do
		awk '/^summary:/ { printf "%s ", $2 }' "$tmp/$f"
	done
	echo
}

# per_op POLICY N OPS PROG ARGS...: Ir per operation of each process.
per_op() {
	po_pol=$1 po_n=$2 po_ops=$3
	shift 3
	a=$(ir "$po_pol" "$po_n" "$@")
	b=$(ir "$po_pol" $((2 * po_n)) "$@")
	echo "$a|$b" | awk -v d="$((po_n * po_ops))" -F'|' '{
		n = split($1, x, " "); split($2, y, " ")
		for (i = 1; i <= n; i++) printf " %.1f", (y[i] - x[i]) / d
		print "" }'
}

# row NAME POLICY N OPS PROG ARGS...: bare, with, and the difference.
row() {
	r_name=$1 r_pol=$2 r_n=$3 r_ops=$4
	shift 4
	off=$(per_op "" "$r_n" "$r_ops" "$@")
	on=$(per_op "$r_pol" "$r_n" "$r_ops" "$@")
	echo "$r_name|$off|$on" | awk -F'|' '{
		n = split($2, x, " "); split($3, y, " ")
		printf "%-18s", $1
		for (i = 1; i <= n; i++)
			printf "  %s: %6.1f -> %6.1f (%+.1f)",
			    i == 1 ? "main" : "peer", x[i], y[i], y[i] - x[i]
		print "" }'
}

echo "user-space instructions (callgrind Ir) per call, bare -> with the library"
row pingpong_rw5s rw5s 2000 2 "$B/bench/pingpong"
row pingpong_default default 2000 2 "$B/bench/pingpong"
row pipe_unmanaged rw5s 20000 2 "$B/bench/fdio" pipe
# sendmmsg + recvmmsg, half on a managed socket with nothing to time.
row mmsg_default default 2000 4 "$B/bench/fdio" mmsg
# connect + close; its in-process acceptor's accept and close included.
row connect_close default 1000 1 "$B/bench/connects"
