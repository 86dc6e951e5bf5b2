/* SPDX-License-Identifier: MIT */
/*
 * export.h - text formats for counters read by other programs: the
 * Prometheus text exposition format (version 0.0.4, what node_exporter's
 * textfile collector reads) and JSON strings.
 *
 * Pure: each function writes to the stdio stream it is given and reads
 * nothing else.  Strings may come from a shared segment another process
 * writes, so each is read up to a NUL or its bound, never beyond, and
 * bytes that are not UTF-8 are written as U+FFFD: both formats require
 * valid UTF-8.  Thread-safe as far as the stream is.
 */
#ifndef RS_EXPORT_H
#define RS_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Writes the first n bytes of s (fewer at a NUL) as the inside of a
 * Prometheus label value: backslash, double quote and line feed escaped.
 */
void rs_export_label(FILE *f, const char *s, size_t n);

/*
 * Writes the "# HELP" and "# TYPE" lines of metric family `name`; type is
 * "counter" or "gauge", help a plain sentence (backslashes and line feeds
 * are escaped all the same).
 */
void rs_export_family(FILE *f, const char *name, const char *type,
    const char *help);

/*
 * Writes one sample line: name{k1="v1",k2="v2",...} value.  labels holds
 * nlabels pairs of key (a valid label name, written as is) and value
 * (escaped, at most RS_EXPORT_VALUE_MAX bytes of it).
 */
#define RS_EXPORT_VALUE_MAX 4096
void rs_export_sample(FILE *f, const char *name, const char *const *labels,
    size_t nlabels, uint64_t value);

/* Writes the first n bytes of s (fewer at a NUL) as a JSON string, with
   its quotes. */
void rs_export_json_string(FILE *f, const char *s, size_t n);

/*
 * Returns the length of the UTF-8 sequence at s (1 to 4 bytes, of at most
 * n), or 0 when it is not valid UTF-8 (stray, overlong, surrogate, above
 * U+10FFFF or cut short).
 */
size_t rs_export_utf8_len(const unsigned char *s, size_t n);

#endif /* RS_EXPORT_H */
