/* SPDX-License-Identifier: MIT */
/*
 * learn_plot.c - `resolute stats --histogram RULE`: a rule's learned
 * latency drawn in the terminal, so that "is 3 x p99 right for this
 * service?" is answered at a glance.
 *
 * Rows are log-scaled, four per doubling (each ~19% wider than the one
 * before), from the fastest sample to the slowest; a bar's length is its
 * share of the fullest row.  The rows holding p50 and p99 are marked, and
 * the effective timeout (what `auto` stands for now, or max) is drawn
 * where it falls.  Single-threaded.
 */
#include <math.h>
#include <string.h>

#include "clock.h"
#include "latency.h"
#include "learn.h"
#include "learn_cli.h"

#define ROWS_PER_OCTAVE 4
#define ROWS 140		/* 2^35 us and beyond in the last */
#define BAR 40

/* The row of a value in us. */
static int row_of(double us)
{
	int r = (int)floor(ROWS_PER_OCTAVE * log2(us < 1 ? 1 : us));

	return r < ROWS ? r : ROWS - 1;
}

static double row_low(int r)
{
	return exp2((double)r / ROWS_PER_OCTAVE);
}

static void draw_row(FILE *f, int r, double w, double top, const char *mark)
{
	char lo[24], hi[24], bar[BAR + 1];
	int n = top > 0 ? (int)(BAR * w / top + 0.5) : 0;

	if (w > 0 && n == 0)
		n = 1;
	memset(bar, '#', (size_t)n);
	bar[n] = '\0';
	fprintf(f, "  %9s .. %-9s |%-*s %8.0f%s\n",
	    rs_cli_fmt_us(row_low(r), lo, sizeof(lo)),
	    rs_cli_fmt_us(row_low(r + 1), hi, sizeof(hi)), BAR, bar, w, mark);
}

/* Draws one kind's histogram; returns 1, or 0 when it is empty. */
static int plot_kind(FILE *f, const struct rs_shm_learn *l,
    enum rs_learn_kind k)
{
	static struct rs_lat_view v;
	double rows[ROWS] = { 0 }, top = 0;
	struct rs_settings s = { .auto_mask = l->auto_mask,
		.auto_timeout = l->auto_timeout };
	struct rs_learn_stat st;
	int lo = ROWS, hi = -1;
	char p50[24], p99[24], mark[96];

	s.auto_timeout.half_life_ms = l->half_life_ms;
	rs_lat_view(&l->hist[k], rs_clock_now_ms(), l->half_life_ms, &v);
	if (v.total <= 0)
		return 0;
	rs_learn_stat(l, k, &s, rs_clock_now_ms(), &st);
	for (unsigned b = 0; b < RS_LAT_BUCKETS; b++) {
		int r = row_of(rs_lat_bucket_mid(b));

		if (v.w[b] <= 0)
			continue;
		rows[r] += v.w[b];
		lo = r < lo ? r : lo;
		hi = r > hi ? r : hi;
	}
	for (int r = lo; r <= hi; r++)
		top = rows[r] > top ? rows[r] : top;
	double tmo_us = (double)st.auto_ms * 1000;
	int tr = row_of(tmo_us);

	fprintf(f, "%s times of %.*s: %.0f samples (decayed), p50 %s, p99 "
	    "%s\n", rs_cli_learn_kind(k), RS_SHM_LABEL_MAX, l->rule,
	    st.samples, rs_cli_fmt_us(st.p50_us, p50, sizeof(p50)),
	    rs_cli_fmt_us(st.p99_us, p99, sizeof(p99)));
	for (int r = lo, gap = 0; r <= (tr > hi && tr - hi <= 12 ? tr : hi);
	    r++) {
		/* A run of empty rows is one line. */
		if (rows[r] <= 0 && r != tr && r + 1 <= hi &&
		    rows[r + 1] <= 0) {
			if (!gap++)
				fprintf(f, "  %22s |\n", "...");
			continue;
		}
		gap = 0;
		snprintf(mark, sizeof(mark), "%s%s%s",
		    r == row_of(st.p50_us) ? "  <- p50" : "",
		    r == row_of(st.p99_us) ? "  <- p99" : "",
		    r == tr ? "  <- timeout" : "");
		draw_row(f, r, rows[r], top, mark);
	}
	fprintf(f, "  timeout: %s%u ms%s\n", l->auto_mask & (1u << k) ?
	    "auto = " : "", (unsigned)st.auto_ms, l->auto_mask & (1u << k) ?
	    "" : " (what auto would stand for; this rule's timeout is fixed)");
	return 1;
}

int rs_cli_learn_plot(FILE *f, const struct rs_shm_learn *l)
{
	int n = 0;

	for (int k = 0; k < RS_LEARN_KINDS; k++) {
		if (n)
			fputc('\n', f);
		n += plot_kind(f, l, (enum rs_learn_kind)k);
	}
	return n;
}
