/* SPDX-License-Identifier: MIT */
/*
 * real.c - the real libc functions, resolved once with dlsym(RTLD_NEXT).
 *
 * Each function pointer starts NULL and is filled on first use.  Two threads
 * may resolve the same symbol at once; both store the same value, and the
 * atomic accesses keep that benign race defined.  While dlsym runs, the
 * thread-local guard is raised so that anything dlsym itself calls (it may
 * allocate, and an allocator may log) goes straight through our wrappers.
 */
#include "real.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>

#include "guard.h"

/*
 * Returns the next definition of name, or NULL.  Out of line: it runs once
 * per name, and keeping it out of the forwarders keeps them a load, a test
 * and a jump.
 */
static __attribute__((noinline, cold)) void *resolve(void **slot,
    const char *name)
{
	void *p;

	rs_guard_enter();
	p = dlsym(RTLD_NEXT, name);
	rs_guard_leave();
	if (p)
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	return p;
}

/* The resolved pointer in slot, resolving name on first use. */
static inline void *resolved(void **slot, const char *name)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	return __builtin_expect(p != NULL, 1) ? p : resolve(slot, name);
}

/*
 * REAL(ret, name, params, args) defines rs_real_name(params), forwarding
 * args to the resolved symbol, or failing with ENOSYS when there is none.
 * HOT() does the same with its slot shared with realfast.h (which declares
 * it; not included here, as it includes real.h), whose inline
 * forwarders the exported reads and writes call directly.
 */
#define REAL_IN(slot, ret, name, params, args)                          \
	ret rs_real_##name params                                       \
	{                                                               \
		ret(*fn) params = (ret(*) params)resolved(&(slot), #name); \
		if (!fn) {                                              \
			errno = ENOSYS;                                 \
			return (ret)-1;                                 \
		}                                                       \
		return fn args;                                         \
	}
#define REAL(ret, name, params, args)                                   \
	static void *slot_##name;                                       \
	REAL_IN(slot_##name, ret, name, params, args)
#define HOT(ret, name, params, args)                                    \
	void *rs_real_slot_##name;                                      \
	REAL_IN(rs_real_slot_##name, ret, name, params, args)

HOT(int, connect, (int fd, const struct sockaddr *sa, socklen_t len),
    (fd, sa, len))
HOT(int, socket, (int d, int t, int p), (d, t, p))
REAL(int, socketpair, (int d, int t, int p, int sv[2]), (d, t, p, sv))
REAL(int, accept, (int fd, struct sockaddr *sa, socklen_t *len),
    (fd, sa, len))
REAL(int, accept4, (int fd, struct sockaddr *sa, socklen_t *len, int fl),
    (fd, sa, len, fl))
HOT(int, close, (int fd), (fd))
REAL(int, close_range, (unsigned a, unsigned b, int fl), (a, b, fl))
REAL(int, shutdown, (int fd, int how), (fd, how))
REAL(int, dup, (int fd), (fd))
REAL(int, dup2, (int fd, int fd2), (fd, fd2))
REAL(int, dup3, (int fd, int fd2, int fl), (fd, fd2, fl))
REAL(int, fcntl, (int fd, int cmd, uintptr_t arg), (fd, cmd, arg))
REAL(int, fcntl64, (int fd, int cmd, uintptr_t arg), (fd, cmd, arg))
REAL(int, ioctl, (int fd, unsigned long req, uintptr_t arg), (fd, req, arg))
REAL(int, getsockopt, (int fd, int lv, int nm, void *v, socklen_t *l),
    (fd, lv, nm, v, l))
HOT(int, setsockopt, (int fd, int lv, int nm, const void *v, socklen_t l),
    (fd, lv, nm, v, l))

HOT(ssize_t, read, (int fd, void *b, size_t n), (fd, b, n))
HOT(ssize_t, readv, (int fd, const struct iovec *v, int c), (fd, v, c))
HOT(ssize_t, recv, (int fd, void *b, size_t n, int fl), (fd, b, n, fl))
HOT(ssize_t, recvfrom,
    (int fd, void *b, size_t n, int fl, struct sockaddr *sa, socklen_t *l),
    (fd, b, n, fl, sa, l))
HOT(ssize_t, recvmsg, (int fd, struct msghdr *m, int fl), (fd, m, fl))
HOT(int, recvmmsg,
    (int fd, struct mmsghdr *v, unsigned n, int fl, struct timespec *t),
    (fd, v, n, fl, t))
HOT(ssize_t, write, (int fd, const void *b, size_t n), (fd, b, n))
HOT(ssize_t, writev, (int fd, const struct iovec *v, int c), (fd, v, c))
HOT(ssize_t, send, (int fd, const void *b, size_t n, int fl),
    (fd, b, n, fl))
HOT(ssize_t, sendto,
    (int fd, const void *b, size_t n, int fl, const struct sockaddr *sa,
	socklen_t l),
    (fd, b, n, fl, sa, l))
HOT(ssize_t, sendmsg, (int fd, const struct msghdr *m, int fl), (fd, m, fl))
HOT(int, sendmmsg, (int fd, struct mmsghdr *v, unsigned n, int fl),
    (fd, v, n, fl))

HOT(int, poll, (struct pollfd *f, nfds_t n, int t), (f, n, t))
REAL(int, ppoll,
    (struct pollfd *f, nfds_t n, const struct timespec *t, const sigset_t *m),
    (f, n, t, m))
REAL(int, select, (int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *t),
    (n, r, w, e, t))
REAL(int, pselect,
    (int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *t,
	const sigset_t *m),
    (n, r, w, e, t, m))
HOT(int, epoll_ctl, (int ep, int op, int fd, struct epoll_event *ev),
    (ep, op, fd, ev))
REAL(int, epoll_wait, (int ep, struct epoll_event *ev, int mx, int t),
    (ep, ev, mx, t))
REAL(int, epoll_pwait,
    (int ep, struct epoll_event *ev, int mx, int t, const sigset_t *m),
    (ep, ev, mx, t, m))
REAL(int, epoll_pwait2,
    (int ep, struct epoll_event *ev, int mx, const struct timespec *t,
	const sigset_t *m),
    (ep, ev, mx, t, m))

REAL(int, execve, (const char *p, char *const a[], char *const e[]),
    (p, a, e))
REAL(int, execv, (const char *p, char *const a[]), (p, a))
REAL(int, execvp, (const char *f, char *const a[]), (f, a))
REAL(int, execvpe, (const char *f, char *const a[], char *const e[]),
    (f, a, e))
REAL(int, fexecve, (int fd, char *const a[], char *const e[]), (fd, a, e))
REAL(int, posix_spawn,
    (pid_t *pid, const char *p, const posix_spawn_file_actions_t *fa,
	const posix_spawnattr_t *at, char *const a[], char *const e[]),
    (pid, p, fa, at, a, e))
REAL(int, posix_spawnp,
    (pid_t *pid, const char *f, const posix_spawn_file_actions_t *fa,
	const posix_spawnattr_t *at, char *const a[], char *const e[]),
    (pid, f, fa, at, a, e))
REAL(int, system, (const char *cmd), (cmd))
REAL(int, wordexp, (const char *w, wordexp_t *p, int fl), (w, p, fl))

/* By hand: popen fails with NULL, not -1. */
FILE *rs_real_popen(const char *cmd, const char *mode)
{
	static void *slot;
	FILE *(*fn)(const char *, const char *) =
	    (FILE *(*)(const char *, const char *))resolved(&slot, "popen");

	if (!fn) {
		errno = ENOSYS;
		return NULL;
	}
	return fn(cmd, mode);
}

REAL(int, getaddrinfo,
    (const char *n, const char *s, const struct addrinfo *h,
	struct addrinfo **r),
    (n, s, h, r))
REAL(struct hostent *, gethostbyname, (const char *n), (n))
REAL(struct hostent *, gethostbyname2, (const char *n, int af), (n, af))
REAL(int, gethostbyname_r,
    (const char *n, struct hostent *h, char *b, size_t l, struct hostent **r,
	int *e),
    (n, h, b, l, r, e))
REAL(int, gethostbyname2_r,
    (const char *n, int af, struct hostent *h, char *b, size_t l,
	struct hostent **r, int *e),
    (n, af, h, b, l, r, e))
