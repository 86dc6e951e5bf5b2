/* SPDX-License-Identifier: MIT */
/*
 * startenv.h - the library's environment variables as the process started
 * with them.
 *
 * Daemons clear or rewrite environ before their first connect (nginx's
 * workers keep only TZ), so the library copies its variables once, from
 * the constructor, before main runs (SPEC 3).  After that the copy never
 * changes: lookups take no lock and are safe from any thread.
 */
#ifndef RS_STARTENV_H
#define RS_STARTENV_H

#include <stdbool.h>

/*
 * Copies every RESOLUTE_* variable and JOURNAL_STREAM out of environ, once
 * per process image (later calls do nothing).  Called by the constructor;
 * a lookup made before it (another library's constructor connecting
 * first) takes the copy then.
 */
void rs_startenv_capture(void);

/*
 * Returns the value name had when the copy was taken, or NULL when it was
 * unset (or one of more variables than the copy holds).  The string lives
 * as long as the process.
 */
const char *rs_startenv_get(const char *name);

/* Returns whether name was set to exactly value. */
bool rs_startenv_is(const char *name, const char *value);

#endif /* RS_STARTENV_H */
