/* SPDX-License-Identifier: MIT */
/*
 * born.c - two bits per descriptor number (see born.h): plain, and
 * whether the program set SO_RCVTIMEO on it.
 *
 * The bitmaps are in .bss, so they cost address space only: a page is touched
 * when a socket of its range of numbers is made.  `high` bounds the words
 * ever set, so that forgetting everything at a fork touches only those.
 */
#include "born.h"

#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "fdtable.h"
#include "hot.h"
#include "single.h"

#define WORDS (RS_FD_MAX / 64)

uint64_t rs_born_bits[WORDS];
/* The program set SO_RCVTIMEO on the socket socket() made on that number. */
uint64_t rs_born_rcv_bits[WORDS];
static unsigned high;

RS_HOT void rs_born_note(int fd, int domain, int type)
{
	unsigned w = (unsigned)fd / 64;

	if (fd < 0 || (unsigned)fd >= RS_FD_MAX ||
	    (domain != AF_INET && domain != AF_INET6) ||
	    (type & ~SOCK_CLOEXEC) != SOCK_STREAM)
		return;
	uint64_t bit = 1ull << (fd % 64);

	if (__atomic_load_n(&rs_born_rcv_bits[w], __ATOMIC_RELAXED) & bit)
		rs_bits_and(&rs_born_rcv_bits[w], ~bit);
	rs_bits_or(&rs_born_bits[w], bit);
	unsigned h = __atomic_load_n(&high, __ATOMIC_RELAXED);

	while (w >= h && !__atomic_compare_exchange_n(&high, &h, w + 1, true,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

RS_HOT void rs_born_clear(int fd)
{
	rs_bits_and(&rs_born_bits[(unsigned)fd / 64],
	    ~(1ull << ((unsigned)fd % 64)));
}

void rs_born_forget_range(unsigned first, unsigned last)
{
	unsigned h = __atomic_load_n(&high, __ATOMIC_RELAXED) * 64;

	for (unsigned fd = first; fd <= last && fd < h; fd++)
		rs_born_forget((int)fd);
}

void rs_born_rcvtimeo_set(int fd)
{
	uint64_t bit = 1ull << ((unsigned)fd % 64);

	if (fd < 0 || (unsigned)fd >= RS_FD_MAX)
		return;
	if (!rs_born_test(rs_born_rcv_bits, fd))
		rs_bits_or(&rs_born_rcv_bits[fd / 64], bit);
}

void rs_born_forget_all(void)
{
	unsigned h = __atomic_load_n(&high, __ATOMIC_RELAXED);

	for (unsigned w = 0; w < h; w++)
		__atomic_store_n(&rs_born_bits[w], 0, __ATOMIC_RELAXED);
}
