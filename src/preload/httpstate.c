/*
 * httpstate.c - the HTTP retry engine's state of one connection: made on
 * the first call that wants it, held by one thread at a time, and freed
 * with its descriptor's entry -- by the thread still inside it, when
 * another thread's close forgets the entry meanwhile.
 */
#include "httpretry.h"

#include <stdlib.h>

static void release(struct rs_fd *e);

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
	return rs_fd_gen(e) != h->fd_gen;
}

struct rs_hconn *rs_hconn_enter(struct rs_fd *e)
{
	struct rs_hconn *h = e->http;

	if (e->http_off || (h == NULL && !e->settings->http.enabled))
		return NULL;
	if (h == NULL) {
		h = calloc(1, sizeof(*h));
		if (h == NULL) {
			e->http_off = true;
			return NULL;
		}
		rs_hr_init(&h->m, &e->settings->http, NULL);
		__atomic_store_n(&rs_fd_http_release, release,
		    __ATOMIC_RELEASE);
		e->http = h;
	}
	if (h->m.phase == RS_HR_PASS)
		return NULL;
	if (!hold(e, h)) {
		h->conflict = true;
		return NULL;
	}
	return h;
}

struct rs_hconn *rs_hconn_enter_wait(struct rs_fd *e, bool *busy)
{
	struct rs_hconn *h = e->http;

	*busy = false;
	if (e->http_off || h == NULL || h->m.phase == RS_HR_PASS)
		return NULL;
	if (!hold(e, h)) {
		*busy = true;
		return NULL;
	}
	return h;
}

static void free_state(struct rs_hconn *h)
{
	rs_hr_free(&h->m);
	free(h);
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

/* The table's release hook: a forgotten entry's state goes with it. */
static void release(struct rs_fd *e)
{
	rs_hconn_drop(e);
}

/*
 * A thread inside (blocked in one of the engine's waits, say, while
 * another closes the descriptor) still uses h: it frees it when it
 * leaves, and finds the descriptor closed (rs_hconn_closed()).
 */
void rs_hconn_drop(struct rs_fd *e)
{
	struct rs_hconn *h = e->http;
	int held = HCONN_HELD;

	e->http = NULL;
	e->http_off = false;
	if (h == NULL || __atomic_compare_exchange_n(&h->busy, &held,
	    HCONN_DROPPED, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	free_state(h);
}
