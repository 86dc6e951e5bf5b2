/* SPDX-License-Identifier: MIT */
/*
 * tlsprobe.c - the thread-local marks of tlsprobe.h: which socket a TLS
 * call of the library's moves records on, and the http-rule socket the
 * thread connected last.
 */
#include "tlsprobe.h"

#include <stdint.h>
#include <string.h>

__thread int rs_tls_probe_fd __attribute__((tls_model("initial-exec"))) = -2;
__thread int rs_tls_connect_fd __attribute__((tls_model("initial-exec"))) = -1;
__thread int rs_tls_plain_fd __attribute__((tls_model("initial-exec"))) = -1;
__thread const struct rs_tls_sink *rs_tls_sink_now
    __attribute__((tls_model("initial-exec")));

/*
 * The ClientHellos noted (tlsprobe.h): a few slots, each a socket, its
 * entry's generation (a note outlives no close) and the client random.
 * Writers and the matcher take a spin lock; a note lives from the
 * program's first write on a socket to its session's next TLS call, and
 * a full table reuses its oldest slot.
 */
#define HELLO_SLOTS 32
#define RANDOM_LEN 32

struct hello {
	int fd1;		/* the socket + 1; 0: free */
	uint32_t gen;
	unsigned char random[RANDOM_LEN];
};

int rs_tls_hellos;
static struct hello hellos[HELLO_SLOTS];
static uint32_t hello_lock;
static unsigned hello_next;	/* the slot a full table reuses next */

static void hello_take(void)
{
	while (__atomic_exchange_n(&hello_lock, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
}

static void hello_drop(void)
{
	__atomic_store_n(&hello_lock, 0, __ATOMIC_RELEASE);
}

/* Frees h (locked). */
static void hello_free(struct hello *h)
{
	if (h->fd1 == 0)
		return;
	h->fd1 = 0;
	__atomic_fetch_sub(&rs_tls_hellos, 1, __ATOMIC_RELAXED);
}

/*
 * A TLS handshake record (22), TLS 1.0 to 1.3 on the record layer, whose
 * first message is a ClientHello (1): its random follows the message
 * length (3 bytes) and the client version (2).
 */
static const unsigned char *client_random(const unsigned char *p, size_t n)
{
	if (n < 11 + RANDOM_LEN || p[0] != 22 || p[1] != 3 || p[2] > 4 ||
	    p[5] != 1)
		return NULL;
	return p + 11;
}

bool rs_tls_hello_note(const struct rs_fd *e, int fd, const void *p, size_t n)
{
	const unsigned char *r = client_random(p, n);
	struct hello *h = NULL;

	/* A TLS call of a session the library follows, or learns, moves
	   its own records: not a program's memory BIO. */
	if (r == NULL || rs_tls_plain_fd == fd || rs_tls_probe_fd != -2)
		return false;
	hello_take();
	for (unsigned i = 0; i < HELLO_SLOTS && h == NULL; i++)
		if (hellos[i].fd1 == fd + 1)
			h = &hellos[i];
	for (unsigned i = 0; i < HELLO_SLOTS && h == NULL; i++)
		if (hellos[i].fd1 == 0)
			h = &hellos[i];
	if (h == NULL)
		h = &hellos[hello_next++ % HELLO_SLOTS];
	hello_free(h);
	h->fd1 = fd + 1;
	h->gen = rs_fd_gen(e);
	memcpy(h->random, r, RANDOM_LEN);
	__atomic_fetch_add(&rs_tls_hellos, 1, __ATOMIC_RELAXED);
	hello_drop();
	return true;
}

int rs_tls_hello_match(const unsigned char *random)
{
	int fd = -1;

	hello_take();
	for (unsigned i = 0; i < HELLO_SLOTS; i++) {
		struct hello *h = &hellos[i];
		const struct rs_fd *e;

		if (h->fd1 == 0)
			continue;
		e = rs_fd_get(h->fd1 - 1);
		/* Closed since: the note goes. */
		if (e == NULL || rs_fd_closed_since(e, h->gen)) {
			hello_free(h);
			continue;
		}
		if (fd < 0 && memcmp(h->random, random, RANDOM_LEN) == 0) {
			fd = h->fd1 - 1;
			hello_free(h);
		}
	}
	hello_drop();
	return fd;
}
