/* SPDX-License-Identifier: MIT */
/*
 * log.h - one line per notable event, text or JSON, one write(2) each.
 *
 * Lines go to RESOLUTE_LOG_FILE (appended) or standard error, always with a
 * raw write system call so that logging never re-enters a wrapper and lines
 * from several threads or processes never interleave.  rs_log_configure()
 * runs once at start-up; the rest is thread-safe.
 */
#ifndef RS_LOG_H
#define RS_LOG_H

#include <stdbool.h>
#include <stdint.h>

enum rs_log_level { RS_LOG_ERROR, RS_LOG_WARN, RS_LOG_INFO, RS_LOG_DEBUG };

/* The facts of one event; unset fields are NULL or negative. */
struct rs_log_fields {
	const char *event;	/* "retry", "timeout", "give_up", ... */
	const char *host;	/* the name the program resolved, or NULL */
	const char *addr;	/* "10.0.0.5:5432", "unix:/run/x.sock" */
	int attempt;		/* 1-based, -1 when not about an attempt */
	int attempts;
	const char *error;	/* "connection refused", or NULL */
	int64_t wait_ms;	/* -1 when no wait follows */
	const char *json_extra;	/* more fields, pre-formatted as
				   "\"k\":v,\"k2\":v2", or NULL */
};

/*
 * Reads RESOLUTE_LOG, RESOLUTE_LOG_FORMAT, RESOLUTE_LOG_FILE (ignored when
 * secure is true) and JOURNAL_STREAM.  Returns 0, or -EINVAL when a value is
 * not understood (the default is kept and a warning logged).
 */
int rs_log_configure(bool secure);

/*
 * For a fork child: the small lock around a log write is free (its holder,
 * another thread of the parent, does not exist here).
 */
void rs_log_fork_child(void);

/*
 * As rs_log_configure(), with the variables read through get (which
 * returns a variable's value or NULL) instead of the current environment:
 * the library passes the environment the process started with.
 */
int rs_log_configure_from(bool secure, const char *(*get)(const char *));

/*
 * Holds back the calling thread's lines until rs_log_flush(): for a thread
 * that holds a lock other threads wait for (the library's start-up), so
 * that a log destination that blocks (a regular file on a mount that
 * hangs, a terminal nobody reads) stalls that thread alone, and only once
 * it has let go of the lock.  One thread at a time; lines past a few
 * kilobytes are dropped, and counted when flushed.
 */
void rs_log_hold(void);

/* Writes the lines held back by rs_log_hold() and stops holding them. */
void rs_log_flush(void);

/* The level set (log.c); read through rs_log_enabled(). */
extern int rs_log_level_set __attribute__((visibility("hidden")));

/* Returns whether lines of this level are written.  Inline: every connect
   asks it for its debug line. */
static inline bool rs_log_enabled(enum rs_log_level level)
{
	return (int)level <= rs_log_level_set;
}

/*
 * Parses "error", "warn", "info", "debug", and "warning" as a synonym of
 * "warn"; returns the level or -1.  The one parser of level names: the
 * library (RESOLUTE_LOG) and `resolute run --log` both call it.
 */
int rs_log_level_parse(const char *s);

/*
 * Writes one line: the text form is "resolute[PID]: LEVEL: MESSAGE"; the
 * JSON form carries the fields and the message as "msg".  f may be NULL.
 * Never blocks for long: a line the destination has no room for (a pipe
 * nobody reads) is dropped, and counted in the next line written.
 */
void rs_log(enum rs_log_level level, const struct rs_log_fields *f,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* RS_LOG_H */
