/* SPDX-License-Identifier: MIT */
/*
 * report_breaker.h - the circuit breakers of a segment in `resolute
 * stats` (SPEC 12): the text lists those not closed, JSON adds a
 * "breakers" member, Prometheus the gauge family resolute_breaker_open.
 * Read-only; single-threaded, as report.h.
 */
#ifndef RS_REPORT_BREAKER_H
#define RS_REPORT_BREAKER_H

#include <stdio.h>

#include "shm.h"

void rs_report_text_breakers(FILE *f, const struct rs_shm_table *t);
void rs_report_json_breakers(FILE *f, const struct rs_shm_table *t);

/* The family's HELP and TYPE lines, then one segment's samples. */
void rs_report_prom_breaker_family(FILE *f);
void rs_report_prom_breakers(FILE *f, const struct rs_shm_table *t);

#endif /* RS_REPORT_BREAKER_H */
