/* SPDX-License-Identifier: MIT */
/*
 * machine.c - the shared table of this process's policy, mapped once.
 *
 * Threads that find it not yet mapped each map it themselves and race to
 * publish their mapping with one CAS; the losers unmap theirs.  Every
 * mapping is of the same file, so whichever wins, all see the same
 * counters, and no thread is ever made to wait for another (a wait here
 * could be a fork child's forever, were the mapping thread of the parent
 * gone).  A fork child inherits a published mapping, or maps its own.
 */
#include "machine.h"

#include <errno.h>
#include <unistd.h>

#include "log.h"

static struct rs_shm_table *table;
static int unusable;

static int map_table(const struct rs_policy *p, struct rs_shm_table **t)
{
	char path[128], real[RS_SHM_POLICY_MAX];
	int err = rs_shm_path(p->path, geteuid(), path, sizeof(path), real,
	    sizeof(real));

	if (!err)
		err = rs_shm_attach(path, real, true, t);
	if (err && !__atomic_exchange_n(&unusable, 1, __ATOMIC_ACQ_REL))
		rs_log(RS_LOG_WARN, NULL, "retry budget: cannot use %s: %s; "
		    "budgets of scope machine are kept per process, and its "
		    "counters are not shared", err == -ENAMETOOLONG ?
		    p->path : path, rs_shm_refusal(err));
	return err;
}

struct rs_shm_table *rs_machine_table(const struct rs_policy *p)
{
	struct rs_shm_table *t = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
	struct rs_shm_table *mine = NULL;

	if (t || !p || !p->path || __atomic_load_n(&unusable, __ATOMIC_ACQUIRE))
		return t;
	if (map_table(p, &mine) < 0)
		return NULL;
	if (__atomic_compare_exchange_n(&table, &t, mine, false,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return mine;
	rs_shm_detach(mine);
	return t;
}
