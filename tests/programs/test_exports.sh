#!/bin/sh
# SPDX-License-Identifier: MIT
# test_exports.sh - the library exports exactly the names listed in
# src/preload/entry/libresolute.map, nothing by accident; and no interposed name is
# called directly inside src/ (scripts/lint-calls.sh).
set -u
# Under ASan RS_LIB is "libasan.so libresolute.so": the library is the last word.
lib=${RS_LIB:-build/libresolute.so}
lib=${lib##* }
want=$(sed -n '/^global:/,/^local:/p' src/preload/entry/libresolute.map |
	grep -v -e '^global:' -e '^local:' | tr ';' '\n' |
	sed 's/[[:space:]]//g' | grep -v '^$' | sort)
got=$(nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | sort)
if [ "$want" != "$got" ]; then
	echo "exported symbols differ from src/preload/entry/libresolute.map:"
	printf '%s\n' "$want" >/tmp/rs-want.$$
	printf '%s\n' "$got" >/tmp/rs-got.$$
	diff /tmp/rs-want.$$ /tmp/rs-got.$$
	rm -f /tmp/rs-want.$$ /tmp/rs-got.$$
	exit 1
fi
echo "exports: $(printf '%s\n' "$got" | wc -l) symbols, as listed"
scripts/lint-calls.sh
