/* SPDX-License-Identifier: MIT */
/*
 * machine.h - this process's machine-wide segment: the table that the
 * user's processes running under the same policy file share (shm.h), for
 * budgets of scope: machine and for the machine-wide counters.
 *
 * Mapped on first use, which is always on a path that has just made or is
 * about to make a system call (a connect), never on a read or write.
 * Lock-free: no thread ever waits for another to map it.  Thread-safe.
 */
#ifndef RS_MACHINE_H
#define RS_MACHINE_H

#include "policy.h"
#include "shm.h"

/*
 * Returns the shared table for policy p, mapping it on first use; NULL
 * when it cannot be used, which is logged once (the callers then keep
 * their accounts in the process).  A fork child inherits the mapping.
 */
struct rs_shm_table *rs_machine_table(const struct rs_policy *p);

#endif /* RS_MACHINE_H */
