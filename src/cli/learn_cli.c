/* SPDX-License-Identifier: MIT */
/*
 * learn_cli.c - what the command shows of learned latency (SPEC 13): the
 * `auto` lines of `resolute explain`, the learned section of `resolute
 * stats` in text and Prometheus form, and `resolute stats --histogram`.
 *
 * Segments are read through read-only mappings that other processes
 * write meanwhile: every figure is a snapshot, consistent enough for a
 * person or a scrape.  Single-threaded.
 */
#include "learn_cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "duration.h"
#include "export.h"
#include "learn.h"

static const char *const kind_names[RS_LEARN_KINDS] = { "connect", "read",
	"write" };

const char *rs_cli_learn_kind(enum rs_learn_kind k)
{
	return kind_names[k];
}

/*
 * A time for people: "<1 ms" for nothing (the library's samples are whole
 * milliseconds, so a zero is a time under one, never none), then us, ms
 * below 999.5 ms and s (three digits, never "1.01e+03 ms"), whole s
 * from 1,000 s.
 */
char *rs_cli_fmt_us(double us, char *buf, size_t len)
{
	if (us < 0.5)
		snprintf(buf, len, "<1 ms");
	else if (us < 999.5)
		snprintf(buf, len, "%.0f us", us);
	else if (us < 999500)
		snprintf(buf, len, "%.3g ms", us / 1000);
	else if (us < 999.5e6)
		snprintf(buf, len, "%.3g s", us / 1e6);
	else
		snprintf(buf, len, "%.0f s", us / 1e6);
	return buf;
}

/* "p99", "p99.9", "p95" for a quantile. */
static char *qname(double q, char *buf, size_t len)
{
	snprintf(buf, len, "p%g", q * 100);
	return buf;
}

struct rs_shm_table *rs_cli_learn_table(const struct rs_policy *p)
{
	char path[256], real[RS_SHM_POLICY_MAX];
	struct rs_shm_table *t;

	if (rs_shm_path(p->path, geteuid(), path, sizeof(path), real,
	    sizeof(real)) < 0 || rs_shm_attach(path, real, false, &t) < 0)
		return NULL;
	return t;
}

void rs_cli_auto_text(const struct rs_shm_learn *l, enum rs_learn_kind k,
    const struct rs_settings *s, char *buf, size_t len)
{
	const struct rs_auto_timeout *a = &s->auto_timeout;
	struct rs_learn_stat st;
	char q[16], v[32], lim[32];

	rs_learn_stat(l, k, s, rs_clock_now_ms(), &st);
	snprintf(v, sizeof(v), "%u ms", (unsigned)st.auto_ms);
	if (st.samples < a->samples) {
		snprintf(buf, len, "auto = %s (max: %.0f of %u samples learned)",
		    v, st.samples, (unsigned)a->samples);
		return;
	}
	snprintf(buf, len, "auto = %s (%g x %s %s, %.0f samples%s)", v,
	    a->multiplier, qname(a->quantile, q, sizeof(q)),
	    rs_cli_fmt_us(st.q_us, lim, sizeof(lim)), st.samples,
	    st.auto_ms == a->max_ms ? ", at max" : st.auto_ms == a->min_ms ?
	    ", at min" : "");
}

uint32_t rs_cli_auto_ms(const struct rs_policy *p, const struct rs_rule *r,
    const struct rs_settings *s, enum rs_learn_kind k)
{
	struct rs_shm_table *t = rs_cli_learn_table(p);
	struct rs_learn_stat st;

	rs_learn_stat(t ? rs_shm_learn(t, r, s, false) : NULL, k, s,
	    rs_clock_now_ms(), &st);
	rs_shm_detach(t);
	return st.auto_ms;
}

char *rs_cli_auto_settings(const struct rs_settings *s, char *buf,
    size_t len)
{
	const struct rs_auto_timeout *a = &s->auto_timeout;
	char lo[32], hi[32], hl[32];

	snprintf(buf, len, "%g x p%g, %s..%s, %u samples, half-life %s",
	    a->multiplier, a->quantile * 100,
	    rs_duration_format(a->min_ms, lo, sizeof(lo)),
	    rs_duration_format(a->max_ms, hi, sizeof(hi)),
	    (unsigned)a->samples,
	    rs_duration_format(a->half_life_ms, hl, sizeof(hl)));
	return buf;
}

/* One histogram's line of the text report. */
static void text_kind(FILE *f, const struct rs_shm_learn *l,
    enum rs_learn_kind k, const struct rs_settings *s, int64_t now)
{
	struct rs_learn_stat st;
	char a[5][24], au[160];

	rs_learn_stat(l, k, s, now, &st);
	if (st.samples <= 0)
		return;
	fprintf(f, "      %-7s %8.0f samples  p50 %s  p90 %s  p99 %s  "
	    "p99.9 %s  max %s\n", kind_names[k], st.samples,
	    rs_cli_fmt_us(st.p50_us, a[0], 24),
	    rs_cli_fmt_us(st.p90_us, a[1], 24),
	    rs_cli_fmt_us(st.p99_us, a[2], 24),
	    rs_cli_fmt_us(st.p999_us, a[3], 24),
	    rs_cli_fmt_us(st.max_us, a[4], 24));
	if (l->auto_mask & (1u << k)) {
		rs_cli_auto_text(l, k, s, au, sizeof(au));
		fprintf(f, "              %s_timeout: %s\n", kind_names[k], au);
	}
}

/* The settings a segment's entry was claimed with, for its figures. */
static void entry_settings(const struct rs_shm_learn *l,
    struct rs_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->auto_mask = l->auto_mask;
	s->auto_timeout = l->auto_timeout;
	s->auto_timeout.half_life_ms = l->half_life_ms;
}

void rs_cli_learn_text(FILE *f, const struct rs_shm_table *t)
{
	int64_t now = rs_clock_now_ms();
	bool any = false;

	for (unsigned i = 0; i < RS_SHM_LEARN; i++) {
		const struct rs_shm_learn *l = &t->learn[i];
		struct rs_settings s;

		if (!__atomic_load_n(&l->ready, __ATOMIC_ACQUIRE))
			continue;
		if (!any)
			fprintf(f, "  learned latency (decaying; samples "
			    "weighed by age):\n");
		any = true;
		entry_settings(l, &s);
		fprintf(f, "    %.*s (half-life %u s):\n", RS_SHM_LABEL_MAX,
		    l->rule, (unsigned)(l->half_life_ms / 1000));
		for (int k = 0; k < RS_LEARN_KINDS; k++)
			text_kind(f, l, (enum rs_learn_kind)k, &s, now);
	}
}

/* One histogram as Prometheus samples: buckets, sum, count. */
static void prom_hist(FILE *f, const char *name, const char *policy,
    const struct rs_shm_learn *l, enum rs_learn_kind k)
{
	char rule[RS_SHM_LABEL_MAX + 1], le[32], n[96];
	const char *labels[] = { "policy", policy, "rule", rule, "le", le };
	uint64_t cum[RS_LAT_LE + 1];

	snprintf(rule, sizeof(rule), "%.*s", RS_SHM_LABEL_MAX, l->rule);
	rs_lat_cumulative(&l->hist[k], cum);
	snprintf(n, sizeof(n), "%s_bucket", name);
	for (unsigned i = 0; i <= RS_LAT_LE; i++) {
		if (i < RS_LAT_LE)
			snprintf(le, sizeof(le), "%g", rs_lat_le_us[i] / 1e6);
		else
			snprintf(le, sizeof(le), "+Inf");
		rs_export_sample(f, n, labels, 3, cum[i]);
	}
	/* The sum in seconds is not a whole number: written here. */
	fprintf(f, "%s_sum{policy=\"", name);
	rs_export_label(f, policy, strlen(policy));
	fputs("\",rule=\"", f);
	rs_export_label(f, rule, strlen(rule));
	fprintf(f, "\"} %.6f\n", (double)__atomic_load_n(&l->hist[k].sum_us,
	    __ATOMIC_RELAXED) / 1e6);
	snprintf(n, sizeof(n), "%s_count", name);
	rs_export_sample(f, n, labels, 2, cum[RS_LAT_LE]);
}

void rs_cli_learn_prom(FILE *f, const struct rs_shm_table *const *t,
    size_t n)
{
	static const struct {
		const char *name, *help;
		enum rs_learn_kind k;
	} fam[] = {
		{ "resolute_connect_seconds", "Time of connect attempts that "
		  "connected.", RS_LEARN_CONNECT },
		{ "resolute_read_wait_seconds", "Waits for data that data "
		  "ended, from the socket's last activity.", RS_LEARN_READ },
	};

	for (size_t j = 0; j < sizeof(fam) / sizeof(fam[0]); j++) {
		rs_export_family(f, fam[j].name, "histogram", fam[j].help);
		for (size_t i = 0; i < n; i++) {
			char policy[RS_SHM_POLICY_MAX + 1];

			snprintf(policy, sizeof(policy), "%.*s",
			    RS_SHM_POLICY_MAX, t[i]->policy);
			for (unsigned e = 0; e < RS_SHM_LEARN; e++)
				if (__atomic_load_n(&t[i]->learn[e].ready,
				    __ATOMIC_ACQUIRE))
					prom_hist(f, fam[j].name, policy,
					    &t[i]->learn[e], fam[j].k);
		}
	}
}

const struct rs_shm_learn *rs_cli_learn_find(const struct rs_shm_table *t,
    const char *rule)
{
	for (unsigned i = 0; i < RS_SHM_LEARN; i++)
		if (__atomic_load_n(&t->learn[i].ready, __ATOMIC_ACQUIRE) &&
		    strncmp(t->learn[i].rule, rule, RS_SHM_LABEL_MAX) == 0)
			return &t->learn[i];
	return NULL;
}
