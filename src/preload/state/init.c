/* SPDX-License-Identifier: MIT */
/*
 * init.c - the library's hooks into the process: constructor, destructor
 * and fork handlers.
 *
 * The constructor only copies the library's environment variables (so
 * that a program clearing its environment keeps them, SPEC 3), claims the
 * descriptor table, registers the fork handlers and, in strict mode,
 * starts the runtime at once (so that a broken policy stops the program at
 * start-up, as RESOLUTE_STRICT promises); everything else starts on first
 * use (runtime.c).  Modules with fork handlers of their own register them
 * themselves (epollinst.c).
 * This file has no header: nothing calls into it.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "born.h"
#include "failover.h"
#include "fdtable.h"
#include "log.h"
#include "names.h"
#include "rng.h"
#include "runtime.h"
#include "startenv.h"
#include "stats.h"

/*
 * The fork child re-seeds its jitter generator, or forked workers would
 * draw the same waits and retry in lock-step.  The locks of the names
 * table and of the failover memory are taken around fork so that the
 * child never inherits them held, and the log's small write lock is free
 * in the child.  The descriptor table
 * becomes the child's (a vfork child's never does).  The shared segment
 * needs nothing: a child inherits its mapping whole, or none and maps it
 * itself (machine.h).
 */
static void fork_prepare(void)
{
	rs_runtime_fork_prepare();
	rs_names_fork_prepare();
	rs_failover_fork_prepare();
}

static void fork_parent(void)
{
	rs_failover_fork_release();
	rs_names_fork_parent();
	rs_runtime_fork_release();
	rs_born_forget_all();
}

static void fork_child(void)
{
	rs_runtime_fork_release();
	rs_fd_fork_child();
	rs_failover_fork_release();
	rs_born_forget_all();
	rs_names_fork_child();
	rs_rng_reseed();
	rs_log_fork_child();
}

/* The per-rule summary line (info level) when the process exits. */
__attribute__((destructor)) static void rs_destructor(void)
{
	if (rs_runtime_peek())
		rs_stats_log_summary();
}

__attribute__((constructor)) static void rs_constructor(void)
{
	rs_startenv_capture();
	rs_fd_set_owner();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	if (rs_startenv_is("RESOLUTE_STRICT", "1") &&
	    !rs_startenv_is("RESOLUTE_DISABLE", "1"))
		rs_runtime_get();
}
