/* SPDX-License-Identifier: MIT */
/*
 * diag.h - diagnostics: FILE:LINE:COL plus a message, collected in order.
 *
 * The policy loader appends one per problem found; the library logs them,
 * the command prints them.  Not thread-safe: one list per load.
 */
#ifndef RS_DIAG_H
#define RS_DIAG_H

#include <stddef.h>

struct rs_diag {
	char *file;
	unsigned line;		/* 1-based; 0 when the file could not be read */
	unsigned col;		/* 1-based */
	char *msg;
};

struct rs_diags {
	struct rs_diag *v;
	size_t n;
	size_t cap;
};

/* Appends one diagnostic (copies of file and msg); returns 0 or -ENOMEM. */
int rs_diags_push(struct rs_diags *d, const char *file, unsigned line,
    unsigned col, const char *msg);

/* Formats diagnostic i as "FILE:LINE:COL: error: MESSAGE" (no newline). */
int rs_diag_format(const struct rs_diag *dg, char *buf, size_t len);

void rs_diags_free(struct rs_diags *d);

#endif /* RS_DIAG_H */
