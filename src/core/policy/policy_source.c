/* SPDX-License-Identifier: MIT */
/*
 * policy_source.c - the order that picks a process's policy file.
 *
 * The system file counts when it exists (F_OK), even if it cannot be read:
 * the load then fails with a message naming it, rather than the built-in
 * policy silently taking over from the administrator's.  Thread-safe.
 */
#include "policy_source.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *rs_policy_choose(const char *opt, bool secure)
{
	const char *env = secure ? NULL : getenv("RESOLUTE_POLICY");

	if (opt)
		return opt;
	if (env && *env)
		return env;
	if (access(RS_SYSTEM_POLICY, F_OK) == 0)
		return RS_SYSTEM_POLICY;
	return NULL;
}

bool rs_policy_is_system(const char *path)
{
	return path && strcmp(path, RS_SYSTEM_POLICY) == 0;
}
