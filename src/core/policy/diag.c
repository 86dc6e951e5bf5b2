/* SPDX-License-Identifier: MIT */
/*
 * diag.c - a growing list of diagnostics.
 *
 * Not thread-safe: one list per load.
 */
#include "diag.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rs_diags_push(struct rs_diags *d, const char *file, unsigned line,
    unsigned col, const char *msg)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;
		struct rs_diag *v = realloc(d->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		d->v = v;
		d->cap = cap;
	}
	struct rs_diag *dg = &d->v[d->n];

	dg->file = strdup(file);
	dg->msg = strdup(msg);
	if (!dg->file || !dg->msg) {
		free(dg->file);
		free(dg->msg);
		return -ENOMEM;
	}
	dg->line = line;
	dg->col = col;
	d->n++;
	return 0;
}

int rs_diag_format(const struct rs_diag *dg, char *buf, size_t len)
{
	if (dg->line == 0)
		return snprintf(buf, len, "%s: error: %s", dg->file, dg->msg);
	return snprintf(buf, len, "%s:%u:%u: error: %s", dg->file, dg->line,
	    dg->col, dg->msg);
}

void rs_diags_free(struct rs_diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].msg);
	}
	free(d->v);
	d->v = NULL;
	d->n = d->cap = 0;
}
