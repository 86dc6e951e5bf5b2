/* SPDX-License-Identifier: MIT */
/*
 * holdcount.c - the count of connections holding bytes (holdcount.h).
 */
#include "holdcount.h"

#include <pthread.h>

#include "guard.h"

unsigned rs_holdcount_n;
int rs_holdcount_top = -1;
void (*rs_holdcount_at_fork)(void);

static void at_fork(void)
{
	if (rs_holdcount_at_fork && rs_holdcount_any())
		rs_holdcount_at_fork();
}

/*
 * Registered when the first connection holds, after every constructor's
 * handlers: it then runs before them all (prepare handlers run in the
 * reverse order of their registration), and finds no lock of theirs
 * taken.
 */
static void register_fork(void)
{
	rs_guard_enter();
	pthread_atfork(at_fork, NULL, NULL);
	rs_guard_leave();
}

uintptr_t rs_holdcount_self(void)
{
	static __thread char token __attribute__((tls_model("initial-exec")));

	return (uintptr_t)&token;
}

void rs_holdcount_note(uintptr_t *holder, bool holding, int fd)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if ((*holder != 0) == holding) {
		if (holding)
			*holder = rs_holdcount_self();
		return;
	}
	if (holding)
		pthread_once(&once, register_fork);
	*holder = holding ? rs_holdcount_self() : 0;
	__atomic_add_fetch(&rs_holdcount_n, holding ? 1u : -1u,
	    __ATOMIC_RELAXED);
	/* The highest number ever to hold: a release of all looks no
	   further. */
	if (holding && fd > __atomic_load_n(&rs_holdcount_top,
	    __ATOMIC_RELAXED))
		__atomic_store_n(&rs_holdcount_top, fd, __ATOMIC_RELAXED);
}
