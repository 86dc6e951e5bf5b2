/* SPDX-License-Identifier: MIT */
/*
 * fake_script.c - the script of expected calls and the model of each
 * socket (see fake.h).
 *
 * Each scripted call takes the next step, checks it and answers with its
 * result; a mismatch is remembered (the first one is reported by
 * fk_done()) and answered with EIO.  A runaway engine is stopped after
 * MAX_CALLS calls, so that a loop that never ends fails instead of hanging.
 */
#include "fake_script.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <cmocka.h>

#define MAX_CALLS 10000

static const struct fk_step *script;
static size_t pos, ncalls;
static char mismatch[512];
static struct fk_sock socks[FK_MAX_FD];

const char *const fk_fn_names[FK_NFN] = {
	"end", "connect", "poll", "ppoll", "select", "pselect", "epoll_pwait",
	"epoll_pwait2", "getsockopt(SO_ERROR)", "getpeername", "read", "readv",
	"recv", "recvfrom", "recvmsg", "recvmmsg", "write", "writev", "send",
	"sendto", "sendmsg", "sendmmsg", "getaddrinfo", "gethostbyname",
};

/* Remembers the first mismatch and says it at once, with the step. */
void fk_wrong(const char *fmt, ...)
{
	char what[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	fprintf(stderr, "fake: step %zu: %s\n", pos, what);
	if (!mismatch[0])
		snprintf(mismatch, sizeof(mismatch), "step %zu: %s", pos, what);
}

void fk_count_call(void)
{
	if (++ncalls > MAX_CALLS) {
		fprintf(stderr, "fake: more than %d calls: the engine loops "
		    "(%s)\n", MAX_CALLS, mismatch);
		exit(3);
	}
}

/*
 * Takes the next step if it is a call of fn on fd (fd -1: any); else
 * records the mismatch and returns NULL.
 */
const struct fk_step *fk_take(enum fk_fn fn, int fd)
{
	const struct fk_step *s = script ? &script[pos] : NULL;

	fk_count_call();
	if (!s || s->fn == FK_END) {
		fk_wrong("unexpected %s(%d) after the end of the script",
		    fk_fn_names[fn], fd);
		return NULL;
	}
	if (s->fn != fn || (s->fd >= 0 && fd >= 0 && s->fd != fd)) {
		fk_wrong("expected %s(%d), got %s(%d)", fk_fn_names[s->fn], s->fd,
		    fk_fn_names[fn], fd);
		return NULL;
	}
	pos++;
	/* What happens while the call is under way (another thread's
	   calls, which take the steps after this one). */
	if (s->during)
		s->during();
	return s;
}

/* The end of a step: its time passes, its hook runs, errno is set. */
long fk_answer(const struct fk_step *s, long ret)
{
	if (!s) {
		errno = EIO;
		return -1;
	}
	fk_advance(s->advance_ms);
	if (s->err) {
		errno = s->err;
		return -1;
	}
	return ret;
}

void fk_check_tmo(const struct fk_step *s, int tmo)
{
	if (s && s->check_tmo && s->tmo_ms != tmo)
		fk_wrong("%s: timeout %d ms, expected %d ms", fk_fn_names[s->fn],
		    tmo, s->tmo_ms);
}

/* A wait that found nothing lasts its whole timeout. */
void fk_pass_time(const struct fk_step *s, int found, int tmo)
{
	if (s && !s->err && !found && !s->advance_ms) {
		if (tmo < 0)
			fk_wrong("%s: would block forever", fk_fn_names[s->fn]);
		else
			fk_advance(tmo);
	}
}

int fk_tmo_of(const struct timespec *ts)
{
	return ts ? (int)(ts->tv_sec * 1000 + ts->tv_nsec / 1000000) : -1;
}

/* What the step says the kernel reports for fd (0: nothing). */
unsigned fk_ready_of(const struct fk_step *s, int fd)
{
	for (int i = 0; s && i < FK_MAX_READY; i++)
		if (s->ready[i].events && s->ready[i].fd == fd)
			return s->ready[i].events;
	return 0;
}

struct fk_sock *fk_sock(int fd)
{
	if (fd < 0 || fd >= FK_MAX_FD) {
		fk_wrong("descriptor %d out of the model's range", fd);
		return &socks[0];
	}
	return &socks[fd];
}

void fk_script(const struct fk_step *steps)
{
	script = steps;
	pos = ncalls = 0;
	mismatch[0] = '\0';
	for (int i = 0; i < FK_MAX_FD; i++)
		socks[i] = (struct fk_sock){ .flags = O_RDWR,
			.type = SOCK_STREAM, .rcvlowat = 1 };
	fk_wait_reset();
	fk_xfer_reset();
	fk_resolve_reset();
	fk_env_reset();
}

size_t fk_consumed(void)
{
	return pos;
}

void fk_done(void)
{
	fk_env_forget();
	if (mismatch[0])
		fail_msg("fake: %s", mismatch);
	if (script && script[pos].fn != FK_END)
		fail_msg("fake: step %zu (%s on %d) never came", pos,
		    fk_fn_names[script[pos].fn], script[pos].fd);
}

