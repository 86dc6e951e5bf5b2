/* SPDX-License-Identifier: MIT */
/*
 * retarget.h - failover (SPEC 5c): the address each retry of a connect
 * goes to.  The attempt code calls in twice: before a retry, which may
 * move the entry's destination to the next address of its name, and after
 * each attempt's outcome, which is remembered so that later choices skip
 * addresses that failed lately.
 *
 * Called with the entry's lock held (by the connect step); what these
 * calls take themselves is the names and failure tables' own short locks,
 * never held across a system call.
 */
#ifndef RS_RETARGET_H
#define RS_RETARGET_H

#include <stdint.h>

#include "fdtable.h"

/*
 * Before a retry of e's connect on fd: when its rule has failover on and
 * the program resolved its name to several addresses, moves e->addr to
 * the next one (same port) and counts a failover.  Leaves e alone
 * otherwise.
 */
void rs_retarget_next(int fd, struct rs_fd *e, int64_t now_ms);

/*
 * Whether a retry of e's connect may go to another address: its rule has
 * failover on and the program resolved its name to several addresses.
 */
bool rs_retarget_has_next(const struct rs_fd *e);

/* rs_retarget_note() of a rule with failover. */
void rs_retarget_record(const struct rs_fd *e, int err, int64_t now_ms);

/*
 * Records the outcome of the attempt on e->addr: err 0 or an errno.
 * Inline: failover needs a name the program resolved, which most connects
 * (to an address, or with no failover) lack, and every connect ends here.
 */
static inline void rs_retarget_note(const struct rs_fd *e, int err,
    int64_t now_ms)
{
	if (e->settings->failover && e->host[0])
		rs_retarget_record(e, err, now_ms);
}

#endif /* RS_RETARGET_H */
