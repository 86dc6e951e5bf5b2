/* SPDX-License-Identifier: MIT */
/*
 * fdtable.h - what the library knows about each managed descriptor.
 *
 * A two-level table indexed by descriptor number: 1024 chunks of 1024
 * entries, a chunk mapped on the first managed descriptor in its range and
 * never freed.  A lookup for an unmanaged descriptor is a bounds check and
 * one or two loads, no lock, no allocation: it is safe in a signal handler
 * and costs next to nothing on the read/write hot path.
 *
 * Each entry has a small lock for its connect state.  rs_fd_lock() spins
 * and is only used around a few instructions; the connect engine, whose
 * steps make system calls, only ever tries it (rs_fd_trylock()), so no
 * thread spins while another is inside the kernel.  A fork child releases
 * them all.
 */
#ifndef RS_FDTABLE_H
#define RS_FDTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>

#include "names.h"
#include "policy.h"
#include "single.h"

#define RS_FD_CHUNK 1024
#define RS_FD_MAX (RS_FD_CHUNK * RS_FD_CHUNK)

enum rs_fd_state {
	RS_FD_NONE = 0,		/* not managed: pass everything through */
	RS_FD_CONNECTING,	/* an attempt is in flight (non-blocking) */
	RS_FD_BACKOFF,		/* waiting before the next attempt */
	RS_FD_CONNECTED,	/* established: read/write timeouts apply */
	RS_FD_FAILED,		/* gave up: final_error for SO_ERROR */
};

struct rs_hconn;

struct rs_fd {
	uint32_t state;			/* enum rs_fd_state, atomic */
	uint32_t lock;			/* spin lock, see rs_fd_lock() */
	uint32_t gen;			/* see rs_fd_gen(); kept by a claim */
	/* What every read and write asks comes first, in one cache line. */
	const struct rs_settings *settings;	/* never NULL when managed */
	const struct rs_rule *rule;	/* NULL: the defaults */
	int64_t last_activity_ms;	/* monotonic, atomic */
	struct rs_hconn *http;		/* HTTP retries (httpretry.h), or NULL */
	/*
	 * The flags every read and write asks, each a bool of its own to
	 * every other reader and writer, and together one aligned word that
	 * the steady-state tests load at once (rs_fd_flag_word()).  Those
	 * a read tests come first, so that they are the word's low half.
	 */
	union {
		struct {
			bool nonblocking;	/* O_NONBLOCK, as the program set it */
			bool shared;		/* dup'd: `nonblocking` may be stale,
						   as O_NONBLOCK can change through
						   a copy */
			bool read_timed_out;	/* a wait reported a read timeout */
			bool kt_ours[2];	/* the kernel holds our value
						   (ktimeo) */
			bool write_timed_out;	/* likewise a write timeout */
			bool http_off;		/* never track HTTP here (a dup) */
			bool flag_spare;	/* unused: the word's last byte */
		};
		uint64_t flag_word;
	};
	bool own_tmo_known[2];		/* own_tmo_ms is up to date */
	uint8_t held;			/* release hooks to call, atomic
					   (rs_fd_hold) */
	/* The logical connect (its address and times are below). */
	unsigned attempt;		/* 1-based number of the current one */
	uint32_t prev_wait_ms;		/* for decorrelated jitter */
	int final_error;		/* FAILED: what SO_ERROR reports */
	bool blocking_interrupted;	/* a blocking connect got EINTR */
	bool safety_net_set;		/* TCP_USER_TIMEOUT is ours for now */
	bool breaker_probe;		/* the attempt is a breaker's probe */
	bool breaker_known;		/* its address has a breaker entry */
	uint32_t own_tmo_ms[2];		/* SO_RCVTIMEO, SO_SNDTIMEO; 0 none */
	struct timeval own_tv[2];	/* the same, as the program set them */
	uint32_t kt_ms[2];		/* the value of ours it holds */
	pid_t kt_pid;			/* the table owner that set it */
	unsigned int saved_user_timeout;	/* the program's value */
	int http_err;			/* a socket error the HTTP engine's look
					   took from the kernel (atomic) */
	/*
	 * Everything above from `settings` on starts zeroed at a claim
	 * (rs_fd_claim); what follows does not, so that a connect clears
	 * 128 bytes rather than 550 and touches no cache line it never
	 * reads.  Each is whole before it is read: the inode is set by the
	 * claim (0 when not asked for); the address (read up to addrlen
	 * only), its length and the connect's deadlines by the connect that
	 * made the entry (an attempt's deadline by that attempt's start), or
	 * all by the copy (rs_fd_copy); the host name's first byte by the
	 * claim.
	 */
	uint64_t ino;			/* the socket's inode, 0 if unknown */
	socklen_t addrlen;
	int64_t attempt_deadline_ms;	/* CONNECTING: end of the attempt */
	int64_t attempt_start_ms;	/* when the current attempt began */
	int64_t retry_at_ms;		/* BACKOFF: when the next one starts */
	int64_t deadline_ms;		/* connect_budget and process deadline */
	struct sockaddr_storage addr;	/* valid up to addrlen */
	char host[RS_HOST_MAX];		/* resolved name, or "" */
};

_Static_assert(offsetof(struct rs_fd, ino) - offsetof(struct rs_fd, settings)
    <= 128, "a claim clears two cache lines at most");
_Static_assert(offsetof(struct rs_fd, flag_spare) -
    offsetof(struct rs_fd, flag_word) == sizeof(uint64_t) - 1,
    "the flags fill their word exactly");

/*
 * The mask of one flag (a member of the flag word) in rs_fd_flag_word(),
 * and the word's bits when that flag alone is true: a bool is one byte,
 * 0 or 1, at its offset in the word, whichever the byte order.
 */
#define RS_FD_FLAG_BYTE(m) \
	(offsetof(struct rs_fd, m) - offsetof(struct rs_fd, flag_word))
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define RS_FD_FLAG_SHIFT(m) (8 * RS_FD_FLAG_BYTE(m))
#else
#define RS_FD_FLAG_SHIFT(m) (8 * (sizeof(uint64_t) - 1 - RS_FD_FLAG_BYTE(m)))
#endif
#define RS_FD_FLAG(m) ((uint64_t)0xff << RS_FD_FLAG_SHIFT(m))
#define RS_FD_FLAG_TRUE(m) ((uint64_t)1 << RS_FD_FLAG_SHIFT(m))

/*
 * Every flag of e at once, for a test of several in one load and one
 * compare.  Relaxed, as each flag's own readers are: the word is 8-byte
 * aligned, so its load is one access, never torn, whichever flags other
 * threads change meanwhile.
 */
static inline uint64_t rs_fd_flag_word(const struct rs_fd *e)
{
	return __atomic_load_n(&e->flag_word, __ATOMIC_RELAXED);
}

/*
 * Hooks of a layer above the table that keeps state of its own in entries
 * (the HTTP engine's connection, the count of kernel timeouts): the table
 * calls them and knows nothing else of that layer.
 *
 * release(e): e ends (forgotten, or claimed anew) while it holds the
 * layer's bit (rs_fd_hold); called once per rs_fd_hold() at most, before
 * the entry is cleared.  It must tolerate finding nothing to free.
 * copy(from, to): a dup made `to` a byte copy of `from` (held cleared),
 * with from's lock held; called for every registered layer, whatever
 * `from` held.  Either may be NULL.
 */
struct rs_fd_hooks {
	void (*release)(struct rs_fd *e);
	void (*copy)(struct rs_fd *from, struct rs_fd *to);
};

#define RS_FD_HOOKS 8

/*
 * Registers h (which must outlive the process: a static) and returns the
 * layer's bit for rs_fd_hold(), or 0 when RS_FD_HOOKS layers already
 * have one.  Lock-free; from a constructor, before any entry holds state.
 */
unsigned rs_fd_hooks_add(const struct rs_fd_hooks *h);

/*
 * Marks e as holding the state of the layer whose bit is bit: its release
 * hook runs when e ends.  Call it after attaching the state, so that a
 * release that races with the attach still finds the state or the bit.
 */
static inline void rs_fd_hold(struct rs_fd *e, unsigned bit)
{
	__atomic_or_fetch(&e->held, (uint8_t)bit, __ATOMIC_RELEASE);
}

/* The chunks of the table (fdtable.c), NULL until mapped; never unmapped. */
extern struct rs_fd *rs_fd_chunks[RS_FD_CHUNK]
    __attribute__((visibility("hidden")));

/*
 * Returns the entry of a managed descriptor, or NULL (unmanaged, negative or
 * out of range).  Lock-free and allocation-free; inline, since every
 * exported read and write starts with it: a bounds check and two loads.
 */
static inline struct rs_fd *rs_fd_get(int fd)
{
	if (__builtin_expect((unsigned)fd >= RS_FD_MAX, 0))
		return NULL;
	struct rs_fd *c = __atomic_load_n(&rs_fd_chunks[(unsigned)fd /
	    RS_FD_CHUNK], __ATOMIC_ACQUIRE);

	if (!c)
		return NULL;
	struct rs_fd *e = &c[(unsigned)fd % RS_FD_CHUNK];

	return __atomic_load_n(&e->state, __ATOMIC_ACQUIRE) ? e : NULL;
}

/*
 * The generation of entry e: it changes each time the descriptor is
 * forgotten (a close) or its entry claimed anew (a connect, a dup onto
 * the number).  A call that may wait records it before its first try and
 * compares it after each wait, before it uses the number again: another
 * thread may have closed the descriptor meanwhile and made another on the
 * same number, whose bytes and entry are not the call's.
 */
static inline uint32_t rs_fd_gen(const struct rs_fd *e)
{
	return __atomic_load_n(&e->gen, __ATOMIC_ACQUIRE);
}

/* Whether e's descriptor was closed (or its number claimed anew) since
   its generation was gen: the call that recorded gen must stop. */
static inline bool rs_fd_closed_since(const struct rs_fd *e, uint32_t gen)
{
	return rs_fd_gen(e) != gen;
}

/*
 * Returns the entry for fd, creating its chunk if needed, zeroed and still
 * RS_FD_NONE (its generation moved on); NULL when fd is out of range or
 * memory is short.  identify: take the socket's inode, for
 * rs_fd_same_socket() (an fstat); the caller asks it only for an entry
 * whose timeouts may act on the number (rs_io_may_time), or sets the
 * inode itself (a copy).
 */
struct rs_fd *rs_fd_claim(int fd, bool identify);

/*
 * Returns whether fd is still the socket that entry e was made for.  A
 * descriptor closed behind the library's back (a raw close(2), or glibc's
 * internal close in fclose() of an fdopen'd stream) may have been reused
 * for another socket, made by a call the library never sees; sockets have
 * unique inode numbers, and all dups of one share it.  One fstat(2): ask
 * only before the library changes what a call does (a wait it would cap),
 * never on the fast path.  True when the inode is unknown: not taken at
 * the claim (no timeout can act on the entry's number) or not to be had.
 */
bool rs_fd_same_socket(const struct rs_fd *e, int fd);

/*
 * The fork handler of the child: the table is now this process's.  Until
 * then, and in a vfork child, calls that would change an entry do nothing.
 */
void rs_fd_fork_child(void);

/* Returns the process the table belongs to (no system call). */
pid_t rs_fd_owner(void);

/*
 * Calls fn for every managed descriptor.  Lock-free; for rare events (an
 * exec) only: it walks every mapped chunk.
 */
void rs_fd_each(void (*fn)(int fd, struct rs_fd *e));

/* Records the calling process as the table's owner (constructor). */
void rs_fd_set_owner(void);

/* Marks entry e, which rs_fd_get() returned, unmanaged. */
void rs_fd_forget_entry(struct rs_fd *e);

/*
 * Marks fd unmanaged (close, reuse of the number).  Inline: every new
 * descriptor asks it, and an unmanaged one costs the lookup alone.
 */
static inline void rs_fd_forget(int fd)
{
	struct rs_fd *e = rs_fd_get(fd);

	if (e)
		rs_fd_forget_entry(e);
}

/*
 * Copies the state of from onto to (dup); to becomes managed likewise, and
 * both are marked shared.  Each registered layer's copy hook then says
 * what of its state the copy keeps.
 */
void rs_fd_copy(int from, int to);

/* Forgets every descriptor in [first, last]. */
void rs_fd_forget_range(unsigned first, unsigned last);

/* Entry state accessors (atomic; inline, as the transfers ask them). */
static inline enum rs_fd_state rs_fd_state(const struct rs_fd *e)
{
	return (enum rs_fd_state)__atomic_load_n(&e->state, __ATOMIC_ACQUIRE);
}

static inline void rs_fd_set_state(struct rs_fd *e, enum rs_fd_state s)
{
	__atomic_store_n(&e->state, (uint32_t)s, __ATOMIC_RELEASE);
}

/* Records activity (a byte sent or received, connection established). */
static inline void rs_fd_touch(struct rs_fd *e, int64_t now_ms)
{
	__atomic_store_n(&e->last_activity_ms, now_ms, __ATOMIC_RELAXED);
}

static inline int64_t rs_fd_last_activity(const struct rs_fd *e)
{
	return __atomic_load_n(&e->last_activity_ms, __ATOMIC_RELAXED);
}

/* rs_fd_lock() while another thread holds the lock: yields until free. */
void rs_fd_lock_wait(struct rs_fd *e);

/* Inline, as a connect takes and gives back the lock a few times.  With
   one thread (single.h) nothing is taken: the word stays 0. */
static inline void rs_fd_lock(struct rs_fd *e)
{
	if (rs_one_thread())
		return;
	if (__builtin_expect(__atomic_exchange_n(&e->lock, 1,
		__ATOMIC_ACQUIRE) != 0, 0))
		rs_fd_lock_wait(e);
}

/* Takes the entry's lock if it is free; returns whether it did. */
static inline bool rs_fd_trylock(struct rs_fd *e)
{
	return rs_one_thread() ||
	    !__atomic_exchange_n(&e->lock, 1, __ATOMIC_ACQUIRE);
}

static inline void rs_fd_unlock(struct rs_fd *e)
{
	__atomic_store_n(&e->lock, 0, __ATOMIC_RELEASE);
}

#endif /* RS_FDTABLE_H */
