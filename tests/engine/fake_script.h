/* SPDX-License-Identifier: MIT */
/*
 * fake_script.h - what the fakes share: the script under way, the checks
 * every scripted call makes, and the per-test resets.  For tests/engine/
 * fake_*.c only; tests use fake.h.  Single-threaded.
 */
#ifndef RS_TEST_FAKE_SCRIPT_H
#define RS_TEST_FAKE_SCRIPT_H

#include <time.h>

#include "fake.h"

/* The names of the scripted calls, for messages. */
extern const char *const fk_fn_names[FK_NFN];

/*
 * Remembers the first mismatch (fk_done() fails the test with it) and
 * says it at once, with the step.
 */
void fk_wrong(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Counts a call; a runaway engine (too many calls) ends the test binary. */
void fk_count_call(void);

/*
 * Takes the next step if it is a call of fn on fd (fd -1: any) and runs
 * its `during` hook; else records the mismatch and returns NULL.
 */
const struct fk_step *fk_take(enum fk_fn fn, int fd);

/* Ends step s (NULL: a mismatch): its time passes, errno is set. */
long fk_answer(const struct fk_step *s, long ret);

/* A wait's timeout must be the step's, when it says so. */
void fk_check_tmo(const struct fk_step *s, int tmo);

/* A wait that found nothing lasts its whole timeout. */
void fk_pass_time(const struct fk_step *s, int found, int tmo);

/* A timespec timeout in ms, -1 for none. */
int fk_tmo_of(const struct timespec *ts);

/* What step s says the kernel reports for fd (0: nothing). */
unsigned fk_ready_of(const struct fk_step *s, int fd);

/* Per-test resets of the wait and transfer models. */
void fk_wait_reset(void);
void fk_xfer_reset(void);
void fk_resolve_reset(void);

#endif /* RS_TEST_FAKE_SCRIPT_H */
