/* SPDX-License-Identifier: MIT */
/*
 * default_policy.h - the compiled-in copy of policy/default.yaml.
 *
 * Read-only data, safe from any thread.
 */
#ifndef RS_DEFAULT_POLICY_H
#define RS_DEFAULT_POLICY_H

#include <stdint.h>

/* The text of policy/default.yaml, NUL-terminated. */
extern const char rs_default_policy[];
/* Its length in bytes, without the NUL. */
extern const uint64_t rs_default_policy_len;

#endif /* RS_DEFAULT_POLICY_H */
