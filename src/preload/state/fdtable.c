/* SPDX-License-Identifier: MIT */
/*
 * fdtable.c - what the library knows about each managed descriptor.
 *
 * Chunks are mapped with mmap rather than malloc: a chunk may be created
 * from inside a wrapper called at any time, and the program's allocator may
 * be the very thing that is calling us.  A chunk, once published, is never
 * unmapped, so a reader racing with a close sees either state, never freed
 * memory.
 */
#include "fdtable.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hot.h"
#include "vfork.h"

struct rs_fd *rs_fd_chunks[RS_FD_CHUNK];

/*
 * The process this table describes.  A vfork child (and a posix_spawn
 * child that calls through the PLT) shares the parent's memory but has
 * its own descriptor table: its close() or dup2() before exec must not
 * change the parent's entries.  The interposed vfork() marks such a child
 * (vfork.h), so no system call is needed to tell it apart; where it
 * cannot, the pid does (another pid, and no fork handlers run), asked
 * only when an entry is about to change.  A fork child has its own copy
 * of the memory and takes the table over (rs_fd_fork_child).  The owner
 * is set by the constructor (rs_fd_set_owner), so a vfork child can never
 * claim it; it is claimed on first use only when another library's
 * constructor connects before ours has run.
 */
static pid_t owner;

static bool owned_here(void)
{
#ifdef RS_VFORK_SEEN
	if (__atomic_load_n(&owner, __ATOMIC_ACQUIRE) != 0)
		return !rs_vfork_child();
#endif
	pid_t me = (pid_t)syscall(SYS_getpid);
	pid_t was = 0;

	return __atomic_compare_exchange_n(&owner, &was, me, false,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) || was == me;
}

pid_t rs_fd_owner(void)
{
	return __atomic_load_n(&owner, __ATOMIC_ACQUIRE);
}

void rs_fd_each(void (*fn)(int fd, struct rs_fd *e))
{
	for (size_t i = 0; i < RS_FD_CHUNK; i++) {
		struct rs_fd *c = __atomic_load_n(&rs_fd_chunks[i],
		    __ATOMIC_ACQUIRE);

		for (size_t j = 0; c && j < RS_FD_CHUNK; j++)
			if (__atomic_load_n(&c[j].state, __ATOMIC_ACQUIRE))
				fn((int)(i * RS_FD_CHUNK + j), &c[j]);
	}
}

void rs_fd_set_owner(void)
{
	__atomic_store_n(&owner, (pid_t)syscall(SYS_getpid), __ATOMIC_RELEASE);
}

/*
 * The fork child takes the table over; an entry lock another thread of
 * the parent held at the fork has no holder in the child, so all are
 * released.
 */
void rs_fd_fork_child(void)
{
	rs_fd_set_owner();
	for (size_t i = 0; i < RS_FD_CHUNK; i++) {
		struct rs_fd *c = __atomic_load_n(&rs_fd_chunks[i],
		    __ATOMIC_ACQUIRE);

		for (size_t j = 0; c && j < RS_FD_CHUNK; j++)
			__atomic_store_n(&c[j].lock, 0, __ATOMIC_RELAXED);
	}
}

/* Returns the chunk holding fd, mapping it if needed. */
static struct rs_fd *chunk_for(int fd)
{
	struct rs_fd **slot = &rs_fd_chunks[fd / RS_FD_CHUNK];
	struct rs_fd *c = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (c)
		return c;
	int save = errno;
	void *p = mmap(NULL, sizeof(struct rs_fd) * RS_FD_CHUNK,
	    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	errno = save;
	if (p == MAP_FAILED)
		return NULL;
	struct rs_fd *expected = NULL;

	if (!__atomic_compare_exchange_n(slot, &expected, p, false,
		__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		munmap(p, sizeof(struct rs_fd) * RS_FD_CHUNK);
		errno = save;
		return expected;
	}
	return p;
}

/* The inode of socket fd, or 0 (not a socket, or fstat failed). */
static uint64_t inode_of(int fd)
{
	int save = errno;
	struct stat st;

	if (syscall(SYS_fstat, fd, &st) != 0) {
		errno = save;	/* only a failure changes it */
		return 0;
	}
	return S_ISSOCK(st.st_mode) ? (uint64_t)st.st_ino : 0;
}

/* The layers' hooks (fdtable.h), each published once, atomically: other
   threads may be forgetting descriptors meanwhile. */
static const struct rs_fd_hooks *hooks[RS_FD_HOOKS];
static unsigned n_hooks;

unsigned rs_fd_hooks_add(const struct rs_fd_hooks *h)
{
	unsigned i = __atomic_fetch_add(&n_hooks, 1, __ATOMIC_RELAXED);

	if (i >= RS_FD_HOOKS)
		return 0;
	__atomic_store_n(&hooks[i], h, __ATOMIC_RELEASE);
	return 1u << i;
}

static const struct rs_fd_hooks *hook(unsigned i)
{
	return i < RS_FD_HOOKS ? __atomic_load_n(&hooks[i], __ATOMIC_ACQUIRE) :
	    NULL;
}

/* The release hooks of the layers e holds state of, each once. */
static __attribute__((noinline)) void release_hooks(struct rs_fd *e)
{
	unsigned held = __atomic_exchange_n(&e->held, 0, __ATOMIC_ACQ_REL);

	for (unsigned i = 0; held != 0; i++, held >>= 1) {
		const struct rs_fd_hooks *h = hook(i);

		if ((held & 1) && h != NULL && h->release != NULL)
			h->release(e);
	}
}

/* An entry that ends (forgotten, or claimed again) lets the layers above
   release what they keep in it.  Most entries hold nothing: one load and
   one test then. */
static inline void release_held(struct rs_fd *e)
{
	if (__builtin_expect(__atomic_load_n(&e->held, __ATOMIC_ACQUIRE) != 0,
	    0))
		release_hooks(e);
}

/*
 * A new generation of e (see rs_fd_gen()), released: with one thread a
 * plain store (single.h), as no other thread can be changing it.
 */
static inline void next_gen(struct rs_fd *e)
{
	uint32_t g = __atomic_load_n(&e->gen, __ATOMIC_RELAXED) + 1;

	if (rs_one_thread())
		__atomic_store_n(&e->gen, g, __ATOMIC_RELEASE);
	else
		__atomic_add_fetch(&e->gen, 1, __ATOMIC_RELEASE);
}

RS_HOT struct rs_fd *rs_fd_claim(int fd, bool identify)
{
	if ((unsigned)fd >= RS_FD_MAX || !owned_here())
		return NULL;
	struct rs_fd *c = chunk_for(fd);

	if (!c)
		return NULL;
	struct rs_fd *e = &c[fd % RS_FD_CHUNK];

	/*
	 * The entry may last have been used by another thread, for an earlier
	 * descriptor of this number: the kernel hands the number out again
	 * only after that one was closed, but nothing in memory orders that
	 * thread's plain writes before ours (dup, for one, reaches here with
	 * no acquire at all).  Acquiring the state word its release left
	 * (rs_fd_forget, rs_fd_set_state) does; ThreadSanitizer saw the race.
	 * A load does that acquire; the store is needed only when the entry
	 * was not forgotten (a number reused behind the library's back), so
	 * the common claim makes no read-modify-write of it.
	 */
	if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) != RS_FD_NONE)
		__atomic_store_n(&e->state, RS_FD_NONE, __ATOMIC_RELAXED);
	next_gen(e);
	release_held(e);
	/*
	 * The fields that must start zeroed are together (fdtable.h); the
	 * host name is a string, which its first byte empties.  Cleared in
	 * two halves: the compiler stores each with four vector moves, where
	 * one clear of the whole becomes a `rep stos`, whose start-up costs
	 * more than the stores.
	 */
	char *z = (char *)e + offsetof(struct rs_fd, settings);
	size_t n = offsetof(struct rs_fd, ino) - offsetof(struct rs_fd,
	    settings);

	memset(z, 0, n / 2);
	memset(z + n / 2, 0, n - n / 2);
	e->host[0] = '\0';
	e->ino = identify ? inode_of(fd) : 0;
	return e;
}

bool rs_fd_same_socket(const struct rs_fd *e, int fd)
{
	/* An unknown inode answers "the same" without asking the kernel. */
	return !e->ino || inode_of(fd) == e->ino;
}

RS_HOT void rs_fd_forget_entry(struct rs_fd *e)
{
	if (!owned_here())
		return;
	/*
	 * Everything this thread does with the entry comes before the release
	 * of its state: the next user of the number (a dup or socket in
	 * another thread) acquires that store in rs_fd_claim() and then
	 * overwrites the entry, so a read of it after the store would race.
	 */
	release_held(e);
	next_gen(e);
	__atomic_store_n(&e->state, RS_FD_NONE, __ATOMIC_RELEASE);
}

void rs_fd_forget_range(unsigned first, unsigned last)
{
	if (last >= RS_FD_MAX)
		last = RS_FD_MAX - 1;
	for (unsigned fd = first; fd <= last; fd++) {
		/* Skip whole unmapped chunks quickly. */
		if (fd % RS_FD_CHUNK == 0 &&
		    !__atomic_load_n(&rs_fd_chunks[fd / RS_FD_CHUNK],
			__ATOMIC_ACQUIRE)) {
			if (last - fd < RS_FD_CHUNK)
				break;
			fd += RS_FD_CHUNK - 1;
			continue;
		}
		rs_fd_forget((int)fd);
	}
}

void rs_fd_copy(int from, int to)
{
	struct rs_fd *src = rs_fd_get(from);

	if (!src || from == to) {
		if (from != to)
			rs_fd_forget(to);
		return;
	}
	if (!owned_here())
		return;
	/* The copy's inode is the original's (one socket), copied below. */
	struct rs_fd *dst = rs_fd_claim(to, false);

	if (!dst)
		return;
	rs_fd_lock(src);
	memcpy((char *)dst + offsetof(struct rs_fd, settings),
	    (char *)src + offsetof(struct rs_fd, settings),
	    sizeof(*dst) - offsetof(struct rs_fd, settings));
	uint32_t st = rs_fd_state(src);
	src->shared = dst->shared = true;
	/* The copy holds nothing until the layers' copy hooks say so. */
	__atomic_store_n(&dst->held, 0, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < RS_FD_HOOKS; i++) {
		const struct rs_fd_hooks *h = hook(i);

		if (h != NULL && h->copy != NULL)
			h->copy(src, dst);
	}
	rs_fd_unlock(src);
	rs_fd_set_state(dst, st);
}

void rs_fd_lock_wait(struct rs_fd *e)
{
	while (__atomic_exchange_n(&e->lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}
