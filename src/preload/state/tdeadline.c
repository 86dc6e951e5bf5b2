/* SPDX-License-Identifier: MIT */
/*
 * tdeadline.c - the calling thread's deadline (see tdeadline.h).
 *
 * Only the thread that read a request is bound by its deadline: a server
 * that hands the request to a worker thread leaves the worker unbound,
 * since nothing the library sees ties the worker's calls to that request.
 */
#include "tdeadline.h"

#include "clock.h"
#include "runtime.h"

struct thread_deadline {
	int64_t mono_ms;	/* RS_NEVER when the thread has none */
	int64_t epoch_ms;
	int fd;			/* where it came from; -1 when none */
};

/* Zero means "none" too, so a new thread needs no initialisation. */
static __thread struct thread_deadline td
    __attribute__((tls_model("initial-exec")));

static int64_t process_deadline(void)
{
	const struct rs_runtime *rt = rs_runtime_peek();

	return rt ? rt->deadline_ms : RS_NEVER;
}

static inline int64_t thread_mono(void)
{
	return td.epoch_ms ? td.mono_ms : RS_NEVER;
}

int64_t rs_tdeadline_get(void)
{
	return rs_clock_min(process_deadline(), thread_mono());
}

int64_t rs_tdeadline_epoch(void)
{
	const struct rs_runtime *rt = rs_runtime_peek();
	int64_t p = process_deadline();

	if (td.epoch_ms && td.mono_ms <= p)
		return td.epoch_ms;
	if (p == RS_NEVER)
		return RS_NEVER;
	return rt->deadline_epoch_ms;
}

void rs_tdeadline_take(int fd, int64_t mono_ms, int64_t epoch_ms)
{
	/* Only this thread is bound, and it sees its own store. */
	rs_runtime_rare_set(RS_RARE_TDEADLINE);
	td.mono_ms = mono_ms;
	td.epoch_ms = epoch_ms > 0 ? epoch_ms : 1;
	td.fd = fd;
}

void rs_tdeadline_clear(void)
{
	td.epoch_ms = 0;
	td.mono_ms = RS_NEVER;
	td.fd = -1;
}

void rs_tdeadline_drop(int fd)
{
	if (td.epoch_ms && td.fd == fd)
		rs_tdeadline_clear();
}

int rs_tdeadline_fd(void)
{
	return td.epoch_ms ? td.fd : -1;
}
