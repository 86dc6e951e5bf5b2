# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# rsrun.sh - sourced by the deadline tests and scripts/deadline-chain.sh,
# after B and CLI are set.
#
# rsrun ARGS...: `resolute run ARGS...` with the library under test.
# rsrun_exec ARGS...: the same in place of the calling (sub)shell, for a
# program started in the background: `(rsrun_exec ARGS...) &` leaves the
# program itself in $!, where `rsrun ARGS... &` leaves a subshell whose
# kill never reaches the program.
# RS_LIB may be "SANITIZER-RUNTIME LIBRARY" (make asan): resolute run takes
# the library alone (RESOLUTE_LIB) and keeps an LD_PRELOAD it finds, so
# the runtime goes there.  The variables the tests set themselves are
# cleared first, so an outer environment cannot change what they see.
unset RESOLUTE_DEADLINE RESOLUTE_POLICY RESOLUTE_DISABLE LD_PRELOAD
rs_lib=${RS_LIB:-$B/libresolute.so}
export RESOLUTE_LIB="${rs_lib##* }"
rs_pre=""
[ "$rs_lib" != "${rs_lib##* }" ] && rs_pre="${rs_lib% *}"
rsrun() {
	if [ -n "$rs_pre" ]; then
		LD_PRELOAD="$rs_pre" "$CLI" run "$@"
	else
		"$CLI" run "$@"
	fi
}
rsrun_exec() {
	if [ -n "$rs_pre" ]; then
		LD_PRELOAD="$rs_pre" exec "$CLI" run "$@"
	fi
	exec "$CLI" run "$@"
}
