/* SPDX-License-Identifier: MIT */
/*
 * policy_yaml.h - YAML text to a struct rs_policy, with exact diagnostics.
 *
 * Every problem found is recorded as FILE:LINE:COL plus a message; loading
 * goes on after an error so that one run reports them all.  Thread-safe
 * (no shared state); allocates with malloc.
 */
#ifndef RS_POLICY_YAML_H
#define RS_POLICY_YAML_H

#include <stddef.h>

#include "diag.h"
#include "policy.h"

/* Largest policy file accepted, in bytes. */
#define RS_POLICY_MAX_BYTES (1024 * 1024)

/*
 * Loads a policy from a file.  Returns 0 and stores a new policy in *out, or
 * a negative errno (-EINVAL for an invalid policy, -ENOENT, -EACCES, -EISDIR,
 * -EFBIG, ... when it cannot be read) with the reasons appended to *d.
 * Reads with the real libc calls only (never an interposed name).
 */
int rs_policy_load_file(const char *path, struct rs_policy **out,
    struct rs_diags *d);

/* The same, for text already in memory; `name` is used in diagnostics. */
int rs_policy_load_buffer(const char *name, const char *buf, size_t len,
    struct rs_policy **out, struct rs_diags *d);

/* The same, for the compiled-in copy of policy/default.yaml ("<built-in>"). */
int rs_policy_load_default(struct rs_policy **out, struct rs_diags *d);

#endif /* RS_POLICY_YAML_H */
