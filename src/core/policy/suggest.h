/* SPDX-License-Identifier: MIT */
/*
 * suggest.h - "did you mean ...?" for a misspelt name.
 *
 * Pure and thread-safe.
 */
#ifndef RS_SUGGEST_H
#define RS_SUGGEST_H

#include <stddef.h>

/*
 * Returns the nearest of names[0..n) to word (case-insensitive optimal
 * string alignment distance: at most 1 edit for names of up to 4
 * characters, 2 below 10, else 3), the first on a tie, or NULL.
 */
const char *rs_suggest(const char *word, const char *const *names, size_t n);

#endif /* RS_SUGGEST_H */
