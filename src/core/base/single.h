/* SPDX-License-Identifier: MIT */
/*
 * single.h - the library's locks and counters where the process has one
 * thread.
 *
 * An atomic read-modify-write (x86's `lock`-prefixed instructions) waits
 * for the CPU's store buffer to drain: ~10 ns alone on this kind of
 * machine, ~25 ns right after a system call, which is where the library's
 * calls are.  The locks and counters that only the library's own users in
 * this process share (an epoll instance's records, a descriptor's entry,
 * the per-process counts) need none while the process has one thread --
 * redis-benchmark, pgbench, curl, psql, an nginx worker -- and those calls
 * then make bare's stores and loads.
 *
 * glibc's __libc_single_threaded (2.32 and later) is true until the first
 * pthread_create(), which sets it false before the new thread runs, and it
 * never becomes true again while a second thread may be running.  So a
 * section entered with one thread ends with one: the library makes no
 * thread, and a thread made in the section would have to be made by the
 * section itself.  Without the variable (an older libc: the weak
 * reference is null) every operation is atomic.  A thread made with a
 * raw clone() is not seen, and cannot use libc, the library included.
 *
 * A signal handler is the other flow a single thread has.  The counters
 * below stay whole against one: their update is one instruction, which a
 * signal comes before or after.  A lock is another matter: a handler that
 * calls epoll_ctl() on an instance, or connect() on a socket, whose
 * section it interrupted would wait for itself forever with the lock
 * taken, and without it races that section as a second thread would.
 * Neither was ever safe, and event loops do not make those calls from a
 * handler (they write to a pipe, which no lock here guards).
 */
#ifndef RS_SINGLE_H
#define RS_SINGLE_H

#include <stdbool.h>
#include <stdint.h>

/* glibc's, declared here weak, so that a libc without it leaves it null. */
extern char __libc_single_threaded __attribute__((weak));

/* Whether the process has one thread (false when libc cannot say). */
static inline bool rs_one_thread(void)
{
	const char *p = &__libc_single_threaded;

	return p != 0 && __atomic_load_n(p, __ATOMIC_RELAXED) != 0;
}

/*
 * RS_SINGLE_RMW(name, insn, builtin) defines name(p, v): *p op= v on a
 * word only this process's threads share.  With one thread a plain
 * update: one instruction where the architecture has a memory form (x86),
 * so a signal handler's update is never lost; elsewhere atomic.
 */
#if defined(__x86_64__)
#define RS_SINGLE_PLAIN(insn, p, v)					\
	if (rs_one_thread()) {						\
		__asm__ volatile(insn " %1, %0" : "+m"(*(p)) : "er"(v)	\
		    : "cc");						\
		return;							\
	}
#else
#define RS_SINGLE_PLAIN(insn, p, v)
#endif

#define RS_SINGLE_RMW(name, insn, builtin)				\
	static inline void name(uint64_t *p, uint64_t v)		\
	{								\
		RS_SINGLE_PLAIN(insn, p, v)				\
		builtin(p, v, __ATOMIC_RELAXED);			\
	}

/* A counter's add, and a bit set's |= and &=. */
RS_SINGLE_RMW(rs_count_add, "addq", __atomic_fetch_add)
RS_SINGLE_RMW(rs_bits_or, "orq", __atomic_fetch_or)
RS_SINGLE_RMW(rs_bits_and, "andq", __atomic_fetch_and)

#endif /* RS_SINGLE_H */
