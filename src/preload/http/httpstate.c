/* SPDX-License-Identifier: MIT */
/*
 * httpstate.c - the HTTP retry engine's state of one connection: made on
 * the first call that wants it, held by one thread at a time, and freed
 * with its descriptor's entry -- by the thread still inside it, when
 * another thread's close forgets the entry meanwhile.
 */
#include "httpstate.h"

#include <stdlib.h>

#include "holdcount.h"

static unsigned http_bit;

/*
 * h->busy: no thread inside, one inside, or one inside while another
 * thread's close forgot the entry, so that the one inside frees the state
 * when it leaves (rs_hconn_drop()).
 */
enum { HCONN_IDLE, HCONN_HELD, HCONN_DROPPED };

/* Takes h for the calling thread; false when another thread has it. */
static bool hold(struct rs_fd *e, struct rs_hconn *h)
{
	int idle = HCONN_IDLE;

	if (!__atomic_compare_exchange_n(&h->busy, &idle, HCONN_HELD, false,
		__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return false;
	h->fd_gen = rs_fd_gen(e);
	return true;
}

bool rs_hconn_closed(const struct rs_fd *e, const struct rs_hconn *h)
{
	return rs_fd_closed_since(e, h->fd_gen);
}

static void free_state(struct rs_hconn *h)
{
	rs_holdcount_note(&h->holder, false, -1);
	rs_hr_free(&h->m);
	free(h);
}

/*
 * A new state for e's connection, made outside the entry's lock (an
 * allocation may wait); NULL when memory is short.
 */
static struct rs_hconn *make_state(struct rs_fd *e)
{
	struct rs_hconn *h = calloc(1, sizeof(*h));

	if (h == NULL)
		return NULL;
	rs_hr_init(&h->m, &e->settings->http, NULL);
	return h;
}

/*
 * Takes e's state for this thread.  The state is looked up and taken
 * under the entry's lock, which rs_hconn_drop() takes too: a close in
 * another thread either finds it taken (and leaves it to this thread to
 * free) or detaches it before this thread sees it, never frees it under
 * this thread's hands.  *busy: another thread had it; with `conflict`,
 * the state is marked so under the same lock (rs_hconn_leave() then
 * stops following the connection).  With `plain`, a state whose socket
 * carries another layer's bytes (TLS records: tx) is not taken, looked
 * at under the lock too (a close may free it as soon as it is detached).
 */
static struct rs_hconn *take(struct rs_fd *e, struct rs_hconn *fresh,
    bool conflict, bool plain, bool *busy)
{
	struct rs_hconn *h;
	bool ok = false;

	rs_fd_lock(e);
	h = e->http;
	if (h == NULL && fresh != NULL) {
		rs_hconn_attach(e, fresh);
		h = fresh;
		fresh = NULL;
	}
	if (h != NULL && plain && h->tx != NULL)
		h = NULL;
	if (h != NULL && h->m.phase != RS_HR_PASS) {
		ok = hold(e, h);
		*busy = !ok;
		if (!ok && conflict)
			h->conflict = true;
	}
	rs_fd_unlock(e);
	if (fresh != NULL)
		free_state(fresh);
	return ok ? h : NULL;
}

uintptr_t rs_hconn_me(void)
{
	/* Its address differs from thread to thread while they live. */
	static __thread char me __attribute__((tls_model("initial-exec")));

	return (uintptr_t)&me;
}

struct rs_hconn *rs_hconn_enter(struct rs_fd *e)
{
	struct rs_hconn *fresh = NULL, *h;
	bool busy = false;

	if (e->http_off)
		return NULL;
	if ((h = __atomic_load_n(&e->http, __ATOMIC_ACQUIRE)) == NULL) {
		if (!e->settings->http.enabled)
			return NULL;
		fresh = make_state(e);
		if (fresh == NULL) {
			e->http_off = true;
			return NULL;
		}
	}
	/* Another thread inside: this call passes it by.  A socket that
	   carries another layer's bytes (TLS records): not entered. */
	return take(e, fresh, true, true, &busy);
}

/*
 * A state the socket's own bytes made before the transport took the
 * connection (the first records of a handshake the library did not see
 * begin, or the plaintext CONNECT of a tunnel): started afresh for tx.
 * Under e's lock, with no thread inside.
 */
static void adopt(struct rs_fd *e, struct rs_hconn *h,
    const struct rs_htx *tx, void *ctx)
{
	rs_hr_free(&h->m);
	rs_hr_init(&h->m, &e->settings->http, NULL);
	h->tx = tx;
	h->tx_ctx = ctx;
	h->out_left = 0;
}

struct rs_hconn *rs_hconn_enter_tx(struct rs_fd *e, const struct rs_htx *tx,
    void *ctx)
{
	struct rs_hconn *fresh = NULL, *h;
	bool busy = false;

	if (e->http_off || !e->settings->http.enabled)
		return NULL;
	if (__atomic_load_n(&e->http, __ATOMIC_ACQUIRE) == NULL) {
		if ((fresh = make_state(e)) == NULL)
			return NULL;
		fresh->tx = tx;
		fresh->tx_ctx = ctx;
	}
	rs_fd_lock(e);
	h = e->http;
	if (h != NULL && h->tx == NULL &&
	    __atomic_load_n(&h->busy, __ATOMIC_ACQUIRE) == HCONN_IDLE)
		adopt(e, h, tx, ctx);
	rs_fd_unlock(e);
	h = take(e, fresh, false, false, &busy);
	if (h != NULL && (h->tx != tx || h->tx_ctx != ctx)) {
		rs_hconn_leave(e, h);
		return NULL;
	}
	return h;
}

struct rs_hconn *rs_hconn_enter_wait(struct rs_fd *e, bool *busy)
{
	*busy = false;
	if (e->http_off || __atomic_load_n(&e->http, __ATOMIC_ACQUIRE) == NULL)
		return NULL;
	return take(e, NULL, false, false, busy);
}

void rs_hconn_leave(struct rs_fd *e, struct rs_hconn *h)
{
	(void)e;
	if (h->orphan) {
		free_state(h);
		return;
	}
	if (h->conflict)
		rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
	if (__atomic_exchange_n(&h->busy, HCONN_IDLE, __ATOMIC_ACQ_REL) ==
	    HCONN_DROPPED)
		free_state(h);
}

void rs_hconn_attach(struct rs_fd *e, struct rs_hconn *h)
{
	e->http = h;
	rs_fd_hold(e, http_bit);
}

/* The table's release hook: a forgotten entry's state goes with it. */
static void release(struct rs_fd *e)
{
	if (e->http != NULL)
		rs_hconn_drop(e);
}

/*
 * The table's copy hook.  Two descriptors of one connection: HTTP is no
 * longer followed.  A socket error the engine holds (http_err) stays with
 * both, as either may be the one the program reads next (httpio.h).
 */
static void copy(struct rs_fd *from, struct rs_fd *to)
{
	to->http = NULL;
	from->http_off = to->http_off = true;
}

static const struct rs_fd_hooks http_hooks = { release, copy };

/* Registered at load: a dup must be marked before any state exists. */
__attribute__((constructor)) static void http_register(void)
{
	http_bit = rs_fd_hooks_add(&http_hooks);
}

/*
 * A thread inside (blocked in one of the engine's waits, say, while
 * another closes the descriptor) still uses h: it frees it when it
 * leaves, and finds the descriptor closed (rs_hconn_closed()).
 */
void rs_hconn_drop(struct rs_fd *e)
{
	int held = HCONN_HELD;
	bool theirs;

	rs_fd_lock(e);
	struct rs_hconn *h = e->http;

	e->http = NULL;
	e->http_off = false;
	theirs = h != NULL && __atomic_compare_exchange_n(&h->busy, &held,
	    HCONN_DROPPED, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	rs_fd_unlock(e);
	if (h != NULL && !theirs)
		free_state(h);
}
