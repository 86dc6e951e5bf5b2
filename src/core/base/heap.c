/* SPDX-License-Identifier: MIT */
/*
 * heap.c - a binary min-heap of intrusive timer nodes.
 *
 * Array-backed; a node's slot is its index plus one, kept up to date on
 * every move, so that removal and re-keying never search.
 */
#include "heap.h"

#include <errno.h>
#include <stdlib.h>

static void place(struct rs_heap *h, unsigned i, struct rs_heap_node *x)
{
	h->v[i] = x;
	x->slot = i + 1;
}

static void sift_up(struct rs_heap *h, unsigned i)
{
	struct rs_heap_node *x = h->v[i];

	while (i > 0) {
		unsigned p = (i - 1) / 2;

		if (h->v[p]->key <= x->key)
			break;
		place(h, i, h->v[p]);
		i = p;
	}
	place(h, i, x);
}

static void sift_down(struct rs_heap *h, unsigned i)
{
	struct rs_heap_node *x = h->v[i];

	for (;;) {
		unsigned c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1]->key < h->v[c]->key)
			c++;
		if (x->key <= h->v[c]->key)
			break;
		place(h, i, h->v[c]);
		i = c;
	}
	place(h, i, x);
}

static int grow(struct rs_heap *h)
{
	unsigned cap = h->cap ? h->cap * 2 : 64;
	struct rs_heap_node **v = realloc(h->v, cap * sizeof(*v));

	if (!v)
		return -ENOMEM;
	h->v = v;
	h->cap = cap;
	return 0;
}

int rs_heap_set(struct rs_heap *h, struct rs_heap_node *x, int64_t key)
{
	if (x->slot) {
		int64_t old = x->key;

		x->key = key;
		if (key < old)
			sift_up(h, x->slot - 1);
		else if (key > old)
			sift_down(h, x->slot - 1);
		return 0;
	}
	if (h->n == h->cap && grow(h) < 0)
		return -ENOMEM;
	x->key = key;
	place(h, h->n++, x);
	sift_up(h, h->n - 1);
	return 0;
}

void rs_heap_remove(struct rs_heap *h, struct rs_heap_node *x)
{
	if (!x->slot)
		return;
	unsigned i = x->slot - 1;
	struct rs_heap_node *last = h->v[--h->n];

	x->slot = 0;
	if (i == h->n)
		return;
	place(h, i, last);
	if (i > 0 && h->v[(i - 1) / 2]->key > last->key)
		sift_up(h, i);
	else
		sift_down(h, i);
}

void rs_heap_free(struct rs_heap *h)
{
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}
