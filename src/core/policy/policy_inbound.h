/* SPDX-License-Identifier: MIT */
/*
 * policy_inbound.h - the top-level keys for deadlines received in requests
 * (SPEC 10): `inbound_deadline: HEADER|off` and `inbound_deadline_max:`.
 *
 * Called by the loader (policy_yaml.c) with the two keys' nodes; problems
 * are reported with line and column like every other key.  Thread-safe.
 */
#ifndef RS_POLICY_INBOUND_H
#define RS_POLICY_INBOUND_H

#include "policy.h"
#include "ydoc.h"

/* inbound_deadline_max when the policy does not set it: 5 minutes. */
#define RS_INBOUND_MAX_DEFAULT_MS 300000u

/*
 * Reads inbound_deadline (key[0], val[0]) and inbound_deadline_max
 * (key[1], val[1]) into p; a NULL key was not given and keeps its
 * default.  Errors go to l.
 */
void rs_policy_load_inbound(struct rs_yload *l,
    const struct rs_ynode *const key[2], const struct rs_ynode *const val[2],
    struct rs_policy *p);

#endif /* RS_POLICY_INBOUND_H */
