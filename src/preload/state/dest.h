/* SPDX-License-Identifier: MIT */
/*
 * dest.h - a managed socket's destination as log lines show it, and the
 * structured log fields every engine's message about a socket starts from.
 *
 * Thread-safe: reads the entry's address and host only.  The host is fixed
 * while the entry is managed; the address changes only between attempts,
 * when failover moves it, under the entry's lock as the step that logs.
 */
#ifndef RS_DEST_H
#define RS_DEST_H

#include "fdtable.h"
#include "log.h"

/* A destination, formatted; both strings are always terminated. */
struct rs_dest {
	char addr[128];			/* "10.0.0.5:5432", "[::1]:80",
					   "unix:/path", "unix:@abstract" */
	char text[RS_HOST_MAX + 160];	/* "host:port (addr)", else addr */
};

/* Formats e's destination into d. */
void rs_dest_format(const struct rs_fd *e, struct rs_dest *d);

/*
 * Formats e's destination into d and returns log fields for event about
 * it: host and addr set, no attempt, no error, no wait (the caller fills
 * in what its message adds).
 */
struct rs_log_fields rs_dest_log_fields(const struct rs_fd *e,
    struct rs_dest *d, const char *event);

#endif /* RS_DEST_H */
