/* SPDX-License-Identifier: MIT */
/*
 * policy_source.h - which policy a process uses: the one order, shared by
 * the library (runtime.c) and the command (`resolute run`, `explain`), so
 * that what `resolute explain` says is what the library does.
 *
 * Thread-safe (reads the environment and the file system only).
 */
#ifndef RS_POLICY_SOURCE_H
#define RS_POLICY_SOURCE_H

#include <stdbool.h>

/* The system policy, used when it exists and nothing else is named. */
#define RS_SYSTEM_POLICY "/etc/resolute/policy.yaml"

/*
 * Returns the path of the policy file to load, or NULL for the compiled-in
 * default, in this order: opt (the command's --policy) when not NULL;
 * $RESOLUTE_POLICY when set and not empty, unless secure (a setuid
 * program: the environment is not trusted); RS_SYSTEM_POLICY when it
 * exists; else NULL.  The result is opt, the environment's string or the
 * constant: never to be freed.
 */
const char *rs_policy_choose(const char *opt, bool secure);

/* Returns whether path is the system policy (not named by the user). */
bool rs_policy_is_system(const char *path);

#endif /* RS_POLICY_SOURCE_H */
