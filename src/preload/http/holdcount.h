/* SPDX-License-Identifier: MIT */
/*
 * holdcount.h - how many connections hold bytes of the program's now (a
 * request head kept back for an edit: httpout.c, httpretry.c), and which
 * thread wrote them, so that the calls that must release them
 * (httphold.h) cost one load while none does, which is nearly always.
 *
 * Thread-safe (atomic).  A holder counts itself once, through its own
 * word (0: not counted, else the token of the thread that wrote the held
 * bytes); counting one that no longer holds is harmless (the release
 * finds nothing and uncounts it), missing one is not.
 */
#ifndef RS_HOLDCOUNT_H
#define RS_HOLDCOUNT_H

#include <stdbool.h>
#include <stdint.h>

extern unsigned rs_holdcount_n;
extern int rs_holdcount_top;

/* What a fork releases first (httphold.c sets it). */
extern void (*rs_holdcount_at_fork)(void);

/* Whether any connection may hold bytes; one relaxed load. */
static inline bool rs_holdcount_any(void)
{
	return __atomic_load_n(&rs_holdcount_n, __ATOMIC_RELAXED) != 0;
}

/* The calling thread's token (never 0). */
uintptr_t rs_holdcount_self(void);

/*
 * The holder of *holder (on descriptor fd) holds bytes now, which the
 * calling thread wrote, or not: counts or uncounts it once.
 */
void rs_holdcount_note(uintptr_t *holder, bool holding, int fd);

#endif /* RS_HOLDCOUNT_H */
