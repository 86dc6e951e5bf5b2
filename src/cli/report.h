/* SPDX-License-Identifier: MIT */
/*
 * report.h - what `resolute stats` read from the shared segments, and its
 * output formats: text for people, JSON, and the Prometheus text
 * exposition format for node_exporter's textfile collector.
 *
 * The segments stay mapped read-only while a report is written; every
 * string in them is read within its field's bound, as another process of
 * the user may be writing to them meanwhile.  Single-threaded.
 */
#ifndef RS_REPORT_H
#define RS_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "shm.h"

struct rs_report_seg {
	char path[320];
	const struct rs_shm_table *t;
};

struct rs_report {
	struct rs_report_seg *segs;
	size_t n;
};

enum rs_report_format { RS_REPORT_TEXT, RS_REPORT_JSON, RS_REPORT_PROM };

/* Writes r to f in format fmt. */
void rs_report_write(FILE *f, const struct rs_report *r,
    enum rs_report_format fmt);

/*
 * Writes r in format fmt to path, atomically: into a temporary file in
 * the same directory, which then replaces path by rename(2), so that a
 * reader sees the old file or the new one, never a part.  The file gets
 * mode 0644 less the umask.  Returns 0, or -1 after a message.
 */
int rs_report_write_file(const char *path, const struct rs_report *r,
    enum rs_report_format fmt);

/* Prints the text report of one segment (text format). */
void rs_report_text_segment(FILE *f, const struct rs_report_seg *s);

#endif /* RS_REPORT_H */
