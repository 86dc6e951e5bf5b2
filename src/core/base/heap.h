/* SPDX-License-Identifier: MIT */
/*
 * heap.h - a binary min-heap of timers keyed by a monotonic time.
 *
 * The nodes live in the caller's records (intrusive): each knows its slot,
 * so a timer is moved or removed in O(log n) without a search, and the
 * earliest is read in O(1).  Used per epoll instance for the read and
 * write timeouts and pending connects of its sockets, so that a wait
 * costs O(ready + expired), never O(registered).  Not thread-safe: the
 * caller holds its own lock.  Times are in milliseconds.
 */
#ifndef RS_HEAP_H
#define RS_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rs_heap_node {
	int64_t key;		/* when the timer is due */
	unsigned slot;		/* 1-based position in the heap; 0: not in it */
};

struct rs_heap {
	struct rs_heap_node **v;
	unsigned n, cap;
};

/* Returns whether x is in a heap. */
static inline bool rs_heap_queued(const struct rs_heap_node *x)
{
	return x->slot != 0;
}

/*
 * Puts x in h due at key, or moves it there if it is already in.  Returns
 * 0, or -ENOMEM (x is then not in h).
 */
int rs_heap_set(struct rs_heap *h, struct rs_heap_node *x, int64_t key);

/* Takes x out of h; nothing when it is not in. */
void rs_heap_remove(struct rs_heap *h, struct rs_heap_node *x);

/* Returns the node due first, or NULL when h is empty. */
static inline struct rs_heap_node *rs_heap_top(const struct rs_heap *h)
{
	return h->n ? h->v[0] : NULL;
}

/* Frees h's array; its nodes are left as they are (the caller's). */
void rs_heap_free(struct rs_heap *h);

#endif /* RS_HEAP_H */
