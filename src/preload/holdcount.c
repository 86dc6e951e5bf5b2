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

void rs_holdcount_note(bool *counted, bool holding, int fd)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (*counted == holding)
		return;
	if (holding)
		pthread_once(&once, register_fork);
	*counted = holding;
	__atomic_add_fetch(&rs_holdcount_n, holding ? 1u : -1u,
	    __ATOMIC_RELAXED);
	/* The highest number ever to hold: a release of all looks no
	   further. */
	if (holding && fd > __atomic_load_n(&rs_holdcount_top,
	    __ATOMIC_RELAXED))
		__atomic_store_n(&rs_holdcount_top, fd, __ATOMIC_RELAXED);
}
