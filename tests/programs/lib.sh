# SPDX-License-Identifier: MIT
# lib.sh - helpers sourced by program tests (not a test itself):
# now_ms, and ok/fail lines counted in $fails, which the caller sets to 0.
# shellcheck shell=sh

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

ok() {
	echo "ok    $*"
}

fail() {
	echo "FAIL  $*"
	fails=$((fails + 1))
}
