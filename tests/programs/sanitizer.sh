# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# sanitizer.sh - sourced by the real-program tests.
#
# Under `make asan`, RS_LIB is "SANITIZER-RUNTIME LIBRARY".  Some programs
# we do not own cannot run at all with a sanitizer runtime preloaded (curl
# deadlocks in setlocale at start-up), with or without resolute.  Such a
# program is skipped there, after proving it with the runtime alone, and
# runs everywhere else.

# usable PROGRAM VERSION-ARG: false when PROGRAM hangs or fails at start-up
# with the sanitizer runtime alone preloaded.
usable() {
	case ${RS_LIB:-} in
	*" "*) ;;
	*) return 0 ;;
	esac
	if LD_PRELOAD="${RS_LIB% *}" timeout 5 "$1" "$2" >/dev/null 2>&1; then
		return 0
	fi
	echo "skip  $1: does not start with the sanitizer runtime preloaded" \
	    "(without resolute as well)"
	return 1
}
