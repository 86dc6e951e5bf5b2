/* SPDX-License-Identifier: MIT */
/*
 * startenv.c - the library's environment variables as the process started
 * with them.
 *
 * One copy, taken under pthread_once from the constructor (or from the
 * first lookup, if another library's constructor connects before ours
 * runs), then only read.  Only the library's own variables are kept: the
 * rest of the environment is the program's business.
 */
#include "startenv.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_VARS 32

extern char **environ;

/* "NAME=VALUE" copies, and the length of each NAME. */
static char *vars[MAX_VARS];
static size_t name_len[MAX_VARS];
static size_t nvars;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static bool wanted(const char *kv)
{
	return strncmp(kv, "RESOLUTE_", 9) == 0 ||
	    strncmp(kv, "JOURNAL_STREAM=", 15) == 0;
}

static void capture(void)
{
	for (char **e = environ; e && *e && nvars < MAX_VARS; e++) {
		const char *eq = strchr(*e, '=');

		if (!eq || !wanted(*e))
			continue;
		char *copy = strdup(*e);

		if (!copy)
			break;
		vars[nvars] = copy;
		name_len[nvars] = (size_t)(eq - *e);
		nvars++;
	}
}

void rs_startenv_capture(void)
{
	pthread_once(&once, capture);
}

const char *rs_startenv_get(const char *name)
{
	size_t n = strlen(name);

	rs_startenv_capture();
	/* The first match wins, as with getenv(). */
	for (size_t i = 0; i < nvars; i++)
		if (name_len[i] == n && memcmp(vars[i], name, n) == 0)
			return vars[i] + n + 1;
	return NULL;
}

bool rs_startenv_is(const char *name, const char *value)
{
	const char *v = rs_startenv_get(name);

	return v && strcmp(v, value) == 0;
}
