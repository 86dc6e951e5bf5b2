/* SPDX-License-Identifier: MIT */
/*
 * learn_cli.h - the learned latency as the command shows it (SPEC 13):
 * explain's `auto` lines, stats' section and Prometheus histograms, the
 * terminal histogram (learn_plot.c) and `resolute suggest`
 * (cmd_suggest.c).  Single-threaded.
 */
#ifndef RS_LEARN_CLI_H
#define RS_LEARN_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "policy.h"
#include "shm.h"

/* "connect", "read", "write". */
const char *rs_cli_learn_kind(enum rs_learn_kind k);

/* Formats a time in us as "850 us", "32.4 ms" or "12.5 s"; returns buf. */
char *rs_cli_fmt_us(double us, char *buf, size_t len);

/* Maps read-only the segment of policy p; NULL when there is none. */
struct rs_shm_table *rs_cli_learn_table(const struct rs_policy *p);

/*
 * Formats what `auto` of kind k under settings s stands for now, and why
 * ("auto = 97 ms (3 x p99 32.4 ms, 412 samples)"), from l (NULL: nothing
 * learned).
 */
void rs_cli_auto_text(const struct rs_shm_learn *l, enum rs_learn_kind k,
    const struct rs_settings *s, char *buf, size_t len);

/* What `auto` of kind k under rule r (NULL: the defaults) with settings
   s of policy p stands for now, in ms. */
uint32_t rs_cli_auto_ms(const struct rs_policy *p, const struct rs_rule *r,
    const struct rs_settings *s, enum rs_learn_kind k);

/* Formats s's auto_timeout ("3 x p99, 100ms..30s, 200 samples,
   half-life 10m"); returns buf. */
char *rs_cli_auto_settings(const struct rs_settings *s, char *buf,
    size_t len);

/* stats: the learned section of one segment, in text. */
void rs_cli_learn_text(FILE *f, const struct rs_shm_table *t);

/* stats --format prometheus: the histograms of segments t[0..n). */
void rs_cli_learn_prom(FILE *f, const struct rs_shm_table *const *t,
    size_t n);

/* Returns the entry of the rule labelled `rule` in t, or NULL. */
const struct rs_shm_learn *rs_cli_learn_find(const struct rs_shm_table *t,
    const char *rule);

/*
 * stats --histogram: draws l's histograms (log-scaled rows, p50, p99 and
 * the effective timeout marked).  Returns the number drawn.
 */
int rs_cli_learn_plot(FILE *f, const struct rs_shm_learn *l);

#endif /* RS_LEARN_CLI_H */
