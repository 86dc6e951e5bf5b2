/* SPDX-License-Identifier: MIT */
/*
 * log.c - one line per notable event, text or JSON, one write(2) each.
 *
 * The line is formatted into a stack buffer and written with a single raw
 * write system call: O_APPEND writes of one buffer do not interleave with
 * other writers, and nothing here can re-enter an interposed function.
 * errno is preserved across every call.
 *
 * A log line never blocks the program: when the destination is a pipe,
 * FIFO, terminal or socket that has no room (a reader that stopped
 * reading), the line is dropped and counted, and the next line that can
 * be written says how many were lost.  Regular files are written plainly.
 */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "sysio.h"

#define LINE_MAX_BYTES 1024

int rs_log_level_set = RS_LOG_WARN;
static int log_json;
static int log_fd = 2;
static int log_journal;		/* prefix lines with <N> priorities */

static const char *const level_names[] = { "error", "warn", "info", "debug" };

int rs_log_level_parse(const char *s)
{
	for (int i = 0; i <= RS_LOG_DEBUG; i++)
		if (strcmp(s, level_names[i]) == 0)
			return i;
	if (strcmp(s, "warning") == 0)
		return RS_LOG_WARN;
	return -1;
}

/* JOURNAL_STREAM is "DEV:INODE" of the journal's stream on stderr. */
static int stderr_is_journal(const char *js)
{
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2)
		return 0;
	if (syscall(SYS_fstat, 2, &st) < 0)
		return 0;
	return st.st_dev == dev && st.st_ino == ino;
}

/*
 * RESOLUTE_LOG_FILE is opened at a high descriptor number, away from the
 * numbers programs use and reuse, and its identity is remembered: a program
 * that closes every descriptor (a daemon) may give the number to a socket
 * of its own, which must never receive our lines.  Before each line the
 * number is checked and, when it names something else now, the file is
 * opened again.
 */
#define LOG_FD_MIN 500

static char log_path[4096];
static dev_t log_dev;
static ino_t log_ino;

/* Opens log_path for appending; returns the descriptor or -errno. */
static int open_log(void)
{
	struct stat st;
	/* O_NONBLOCK: opening a FIFO that has no reader would wait for one
	   (while the library starts, holding every other thread's first
	   call); it fails with ENXIO instead, and standard error is used.
	   Writes then never wait for a FIFO's reader either. */
	int fd = rs_sys_open(log_path, O_WRONLY | O_APPEND | O_CREAT |
	    O_NONBLOCK, 0600);

	if (fd < 0)
		return fd;
	long hi = syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, LOG_FD_MIN);

	if (hi >= 0) {
		rs_sys_close(fd);
		fd = (int)hi;
	}
	if (syscall(SYS_fstat, fd, &st) == 0) {
		log_dev = st.st_dev;
		log_ino = st.st_ino;
	}
	return fd;
}

/* Returns the descriptor to write to: the log file, checked, or stderr. */
static int log_target(void)
{
	struct stat st;

	if (log_fd == 2)
		return 2;
	if (syscall(SYS_fstat, log_fd, &st) == 0 && st.st_dev == log_dev &&
	    st.st_ino == log_ino)
		return log_fd;
	int fd = open_log();

	log_fd = fd >= 0 ? fd : 2;
	return log_fd;
}

int rs_log_configure_from(bool secure, const char *(*get)(const char *))
{
	const char *lv = get("RESOLUTE_LOG");
	const char *fmt = get("RESOLUTE_LOG_FORMAT");
	const char *file = secure ? NULL : get("RESOLUTE_LOG_FILE");
	int bad = 0;

	if (lv && *lv) {
		int l = rs_log_level_parse(lv);

		if (l < 0)
			bad = 1;
		else
			rs_log_level_set = l;
	}
	if (fmt && *fmt) {
		if (strcmp(fmt, "json") == 0 || strcmp(fmt, "text") == 0)
			log_json = strcmp(fmt, "json") == 0;
		else
			bad = 1;
	}
	if (file && *file && strlen(file) < sizeof(log_path)) {
		memcpy(log_path, file, strlen(file) + 1);
		int fd = open_log();

		if (fd >= 0) {
			if (log_fd != 2)
				rs_sys_close(log_fd);
			log_fd = fd;
		} else {
			rs_log(RS_LOG_WARN, NULL, "cannot open log file %s: %s",
			    file, strerror(-fd));
		}
	}
	log_journal = log_fd == 2 && stderr_is_journal(get("JOURNAL_STREAM"));
	if (bad)
		rs_log(RS_LOG_WARN, NULL,
		    "RESOLUTE_LOG must be error, warn, info or debug and "
		    "RESOLUTE_LOG_FORMAT text or json; using defaults");
	return bad ? -EINVAL : 0;
}

static const char *process_env(const char *name)
{
	return getenv(name);
}

int rs_log_configure(bool secure)
{
	return rs_log_configure_from(secure, process_env);
}

/*
 * Appends printf output at *pos, never past cap (truncating).  The format
 * attribute lets clang check the callers' literals (-Wformat-nonliteral).
 */
__attribute__((format(printf, 4, 5)))
static void put(char *buf, size_t cap, size_t *pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t cap, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*pos >= cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *pos, cap - *pos, fmt, ap);
	va_end(ap);
	if (n > 0)
		*pos = *pos + (size_t)n < cap ? *pos + (size_t)n : cap - 1;
}

/* Appends s as a JSON string, escaping what JSON requires. */
static void put_json_str(char *buf, size_t cap, size_t *pos, const char *s)
{
	put(buf, cap, pos, "\"");
	for (; *s && *pos + 8 < cap; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			put(buf, cap, pos, "\\%c", c);
		else if (c < 0x20)
			put(buf, cap, pos, "\\u%04x", c);
		else
			buf[(*pos)++] = (char)c;
	}
	buf[*pos < cap ? *pos : cap - 1] = '\0';
	put(buf, cap, pos, "\"");
}

static void put_json_fields(char *buf, size_t cap, size_t *pos,
    const struct rs_log_fields *f)
{
	const char *keys[] = { "event", "host", "addr", "error" };
	const char *vals[] = { f->event, f->host, f->addr, f->error };

	for (int i = 0; i < 4; i++) {
		if (!vals[i])
			continue;
		put(buf, cap, pos, ",\"%s\":", keys[i]);
		put_json_str(buf, cap, pos, vals[i]);
	}
	if (f->attempt >= 0)
		put(buf, cap, pos, ",\"attempt\":%d,\"attempts\":%d",
		    f->attempt, f->attempts);
	if (f->wait_ms >= 0)
		put(buf, cap, pos, ",\"wait_ms\":%lld", (long long)f->wait_ms);
	if (f->json_extra)
		put(buf, cap, pos, ",%s", f->json_extra);
}

/*
 * Lines dropped because the destination had no room, not yet reported.
 * The flag is a small lock held only across a non-blocking attempt to
 * write, so that two of our threads never both see room for one line and
 * then block; a fork child, where its holder does not exist, clears it.
 */
static unsigned long log_dropped;
static int log_busy;

static void room_lock(void)
{
	while (__atomic_exchange_n(&log_busy, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void room_unlock(void)
{
	__atomic_store_n(&log_busy, 0, __ATOMIC_RELEASE);
}

void rs_log_fork_child(void)
{
	room_unlock();
}

/*
 * Writes len bytes to fd without blocking for long.  A socket (the
 * journal's stream) takes MSG_DONTWAIT; a pipe, FIFO or terminal is
 * written only when poll says it has room, which for a pipe means a free
 * buffer of a page, more than a line (lines are shorter than PIPE_BUF, so
 * they are written whole or not at all).  Returns 0, -EAGAIN when there
 * was no room, or -errno.
 */
static int write_nowait(int fd, const char *buf, size_t len)
{
	struct stat st;

	if (syscall(SYS_fstat, fd, &st) < 0)
		return -errno;
	if (S_ISSOCK(st.st_mode)) {
		long n = syscall(SYS_sendto, fd, buf, len,
		    MSG_DONTWAIT | MSG_NOSIGNAL, NULL, 0);

		return n < 0 ? -errno : 0;
	}
	if (S_ISREG(st.st_mode))
		return rs_sys_write_all(fd, buf, len);
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	if (syscall(SYS_poll, &p, 1, 0) != 1 || !(p.revents & POLLOUT))
		return (p.revents & (POLLERR | POLLHUP)) ? -EPIPE : -EAGAIN;
	return rs_sys_write_all(fd, buf, len);
}

/* Writes a line, first saying how many were dropped before it. */
static int write_counted(int fd, const char *line, size_t len)
{
	char note[128];
	int r = 0;

	room_lock();
	if (log_dropped) {
		int n = snprintf(note, sizeof(note), "resolute[%ld]: warn: %lu "
		    "log lines dropped: log destination full\n",
		    (long)getpid(), log_dropped);

		r = write_nowait(fd, note, (size_t)n);
		if (r == 0)
			log_dropped = 0;
	}
	if (r == 0)
		r = write_nowait(fd, line, len);
	if (r == -EAGAIN)
		log_dropped++;
	room_unlock();
	return r;
}

/*
 * Writes one line.  A log line the program never asked for must not kill
 * it: when standard error is a pipe nobody reads any more, the SIGPIPE our
 * write raises is blocked and consumed here (unless one was already
 * pending for the program).
 */
static void write_line(const char *line, size_t len)
{
	sigset_t pipe_set, old, pending;
	struct timespec zero = { 0, 0 };

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	sigpending(&pending);
	int was_pending = sigismember(&pending, SIGPIPE);

	if (write_counted(log_target(), line, len) == -EPIPE &&
	    !was_pending && !sigismember(&old, SIGPIPE))
		sigtimedwait(&pipe_set, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * The lines rs_log_hold() holds back: only the holding thread touches
 * them (one thread at a time, the one starting the library).
 */
#define HELD_BYTES 8192

static __thread bool log_holding __attribute__((tls_model("initial-exec")));
static char held[HELD_BYTES];
static size_t held_len;
static unsigned held_lost;

void rs_log_hold(void)
{
	log_holding = true;
}

void rs_log_flush(void)
{
	size_t at = 0;

	log_holding = false;
	while (at < held_len) {
		const char *nl = memchr(held + at, '\n', held_len - at);
		size_t len = (size_t)(nl - (held + at)) + 1;

		write_line(held + at, len);
		at += len;
	}
	held_len = 0;
	if (held_lost)
		rs_log(RS_LOG_WARN, NULL, "%u start-up log lines dropped: "
		    "too many", held_lost);
	held_lost = 0;
}

/* Keeps a whole line (ending in a newline) for rs_log_flush(). */
static void hold_line(const char *line, size_t len)
{
	if (len > sizeof(held) - held_len) {
		held_lost++;
		return;
	}
	memcpy(held + held_len, line, len);
	held_len += len;
}

static const char journal_prio[] = { '3', '4', '6', '7' };

void rs_log(enum rs_log_level level, const struct rs_log_fields *f,
    const char *fmt, ...)
{
	int save = errno;
	char msg[LINE_MAX_BYTES / 2], line[LINE_MAX_BYTES];
	size_t pos = 0;
	va_list ap;

	if (!rs_log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log_journal)
		put(line, sizeof(line), &pos, "<%c>", journal_prio[level]);
	if (log_json) {
		put(line, sizeof(line), &pos,
		    "{\"ts\":%lld,\"pid\":%ld,\"level\":\"%s\"",
		    (long long)rs_clock_epoch_ms(), (long)getpid(),
		    level_names[level]);
		if (f)
			put_json_fields(line, sizeof(line), &pos, f);
		put(line, sizeof(line), &pos, ",\"msg\":");
		put_json_str(line, sizeof(line) - 2, &pos, msg);
		put(line, sizeof(line), &pos, "}");
	} else {
		put(line, sizeof(line), &pos, "resolute[%ld]: %s: %s",
		    (long)getpid(), level_names[level], msg);
	}
	if (pos >= sizeof(line) - 1)
		pos = sizeof(line) - 2;
	line[pos++] = '\n';
	if (log_holding)
		hold_line(line, pos);
	else
		write_line(line, pos);
	errno = save;
}
