/* SPDX-License-Identifier: MIT */
/*
 * suggest.c - the nearest known name to a misspelt one.
 *
 * Pure and thread-safe (the distance table is on the stack).
 */
#include "suggest.h"

#include <ctype.h>
#include <string.h>

/*
 * Optimal string alignment distance (Damerau-Levenshtein without
 * repeated edits of one substring), case-insensitive, for suggestions.
 */
static unsigned edit_distance(const char *a, const char *b)
{
	unsigned d[33][33];
	size_t n = strlen(a), m = strlen(b);

	if (n > 32 || m > 32)
		return 99;
	for (size_t i = 0; i <= n; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= n; i++) {
		for (size_t j = 1; j <= m; j++) {
			unsigned cost = tolower((unsigned char)a[i - 1]) !=
			    tolower((unsigned char)b[j - 1]);
			unsigned v = d[i - 1][j] + 1;

			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[n][m];
}

const char *rs_suggest(const char *word, const char *const *names, size_t n)
{
	const char *best = NULL;
	unsigned best_d = 99;

	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]);
		unsigned limit = len <= 4 ? 1 : len < 10 ? 2 : 3;
		unsigned dist = edit_distance(word, names[i]);

		if (dist <= limit && dist < best_d) {
			best = names[i];
			best_d = dist;
		}
	}
	return best;
}
