#!/bin/sh
# SPDX-License-Identifier: MIT
# build-deps.sh - before anything is compiled, make sure that what the build
# itself will include and compile is there, and name the Debian package of
# whatever is not, with the one command that installs them all.  Called by
# the Makefile (targets build-deps and test-deps), with the compiler, flags
# and paths it will use, so that a missing header is found where the build
# would look for it and not somewhere this script guesses:
#
#   CC=cc CPPFLAGS=... LLHTTP_INC=... LLHTTP_SRC=... scripts/build-deps.sh [test]
#
# With `test`, also what the unit and engine tests link (cmocka).  Exits 0
# when everything is there (one compiler run per header: a few tens of
# milliseconds), else 1 after the message.
set -u
CC=${CC:-cc}
LLHTTP_INC=${LLHTTP_INC:-/usr/share/include/llhttp}
LLHTTP_SRC=${LLHTTP_SRC:-/usr/share/llhttp}
missing=""
why=""

# have_header HEADER SYMBOL: the compiler finds HEADER and it declares SYMBOL
# (an empty or foreign file of that name is not the package's header).
have_header() {
	# shellcheck disable=SC2086 # CC and CPPFLAGS are lists of words
	printf '#include <stddef.h>\n#include <stdarg.h>\n#include <setjmp.h>\n#include <%s>\nvoid *rs_probe = (void *)&%s;\n' "$1" "$2" |
		$CC ${CPPFLAGS:-} -fsyntax-only -x c - >/dev/null 2>&1
}

need() {
	missing="$missing $1"
	why="$why
  $1: $2"
}

if [ ! -f "$LLHTTP_INC/llhttp.h" ] || [ ! -f "$LLHTTP_SRC/api.c" ]; then
	need node-llhttp "llhttp.h in $LLHTTP_INC and its sources in $LLHTTP_SRC (LLHTTP_INC, LLHTTP_SRC)"
fi
have_header yaml.h yaml_parser_initialize ||
	need libyaml-dev "<yaml.h> (the policy parser) not found by $CC"
if [ "${1:-}" = test ]; then
	have_header cmocka.h _cmocka_run_group_tests ||
		need libcmocka-dev "<cmocka.h> (the unit and engine tests) not found by $CC"
fi

[ -z "$missing" ] && exit 0
{
	echo "make: missing build dependencies, nothing was compiled:$why"
	echo "Install them (Debian/Ubuntu, as root):"
	echo "  apt-get update && apt-get install -y --no-install-recommends$missing"
	echo "or run scripts/deps.sh as root, which installs what the tests need as well."
} >&2
exit 1
