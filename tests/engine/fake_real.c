/*
 * fake_real.c - the scripted rs_real_*() table (see fake.h).
 *
 * Each scripted call takes the next step, checks it and answers with its
 * result; a mismatch is remembered (the first one is reported by
 * fk_done()) and answered with EIO.  State-only calls are answered from
 * the socket and epoll models below.  A runaway engine is stopped after
 * MAX_CALLS calls, so that a loop that never ends fails instead of hanging.
 */
#include "fake.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "real.h"

#include <setjmp.h>
#include <cmocka.h>

#define MAX_CALLS 10000
#define MAX_REGS 32

static const struct fk_step *script;
static size_t pos, ncalls;
static char mismatch[512];
static struct fk_sock socks[FK_MAX_FD];
static struct fk_epreg regs[MAX_REGS];
static bool reg_used[MAX_REGS];
static int ctl_count[4];

static const char *const fn_names[FK_NFN] = {
	"end", "connect", "poll", "ppoll", "select", "pselect", "epoll_pwait",
	"epoll_pwait2", "getsockopt(SO_ERROR)", "getpeername", "read", "readv",
	"recv", "recvfrom", "recvmsg", "recvmmsg", "write", "writev", "send",
	"sendto", "sendmsg", "sendmmsg",
};

/* Remembers the first mismatch and says it at once, with the step. */
__attribute__((format(printf, 1, 2)))
static void wrong(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static void wrong(const char *fmt, ...)
{
	char what[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	fprintf(stderr, "fake: step %zu: %s\n", pos, what);
	if (!mismatch[0])
		snprintf(mismatch, sizeof(mismatch), "step %zu: %s", pos, what);
}

static void count_call(void)
{
	if (++ncalls > MAX_CALLS) {
		fprintf(stderr, "fake: more than %d calls: the engine loops "
		    "(%s)\n", MAX_CALLS, mismatch);
		exit(3);
	}
}

/*
 * Takes the next step if it is a call of fn on fd (fd -1: any); else
 * records the mismatch and returns NULL.
 */
static const struct fk_step *take(enum fk_fn fn, int fd)
{
	const struct fk_step *s = script ? &script[pos] : NULL;

	count_call();
	if (!s || s->fn == FK_END) {
		wrong("unexpected %s(%d) after the end of the script",
		    fn_names[fn], fd);
		return NULL;
	}
	if (s->fn != fn || (s->fd >= 0 && fd >= 0 && s->fd != fd)) {
		wrong("expected %s(%d), got %s(%d)", fn_names[s->fn], s->fd,
		    fn_names[fn], fd);
		return NULL;
	}
	pos++;
	/* What happens while the call is under way (another thread's
	   calls, which take the steps after this one). */
	if (s->during)
		s->during();
	return s;
}

/* The end of a step: its time passes, its hook runs, errno is set. */
static long answer(const struct fk_step *s, long ret)
{
	if (!s) {
		errno = EIO;
		return -1;
	}
	fk_advance(s->advance_ms);
	if (s->err) {
		errno = s->err;
		return -1;
	}
	return ret;
}

static void check_tmo(const struct fk_step *s, int tmo)
{
	if (s && s->check_tmo && s->tmo_ms != tmo)
		wrong("%s: timeout %d ms, expected %d ms", fn_names[s->fn],
		    tmo, s->tmo_ms);
}

/* A wait that found nothing lasts its whole timeout. */
static void pass_time(const struct fk_step *s, int found, int tmo)
{
	if (s && !s->err && !found && !s->advance_ms) {
		if (tmo < 0)
			wrong("%s: would block forever", fn_names[s->fn]);
		else
			fk_advance(tmo);
	}
}

static int tmo_of(const struct timespec *ts)
{
	return ts ? (int)(ts->tv_sec * 1000 + ts->tv_nsec / 1000000) : -1;
}

/* What the step says the kernel reports for fd (0: nothing). */
static unsigned ready_of(const struct fk_step *s, int fd)
{
	for (int i = 0; s && i < FK_MAX_READY; i++)
		if (s->ready[i].events && s->ready[i].fd == fd)
			return s->ready[i].events;
	return 0;
}

struct fk_sock *fk_sock(int fd)
{
	if (fd < 0 || fd >= FK_MAX_FD) {
		wrong("descriptor %d out of the model's range", fd);
		return &socks[0];
	}
	return &socks[fd];
}

void fk_script(const struct fk_step *steps)
{
	script = steps;
	pos = ncalls = 0;
	mismatch[0] = '\0';
	for (int i = 0; i < FK_MAX_FD; i++)
		socks[i] = (struct fk_sock){ .flags = O_RDWR,
			.type = SOCK_STREAM };
	fk_real_reset();
	fk_env_reset();
}

size_t fk_consumed(void)
{
	return pos;
}

void fk_done(void)
{
	fk_env_forget();
	if (mismatch[0])
		fail_msg("fake: %s", mismatch);
	if (script && script[pos].fn != FK_END)
		fail_msg("fake: step %zu (%s on %d) never came", pos,
		    fn_names[script[pos].fn], script[pos].fd);
}

/* ---- connect and socket options ---- */

int rs_real_connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	const struct fk_step *s = take(FK_CONNECT, fd);
	bool unspec = sa && len >= sizeof(sa_family_t) &&
	    sa->sa_family == AF_UNSPEC;

	if (s && s->unspec != unspec)
		wrong("connect(%d): %s, expected %s", fd,
		    unspec ? "AF_UNSPEC" : "an address",
		    s->unspec ? "AF_UNSPEC" : "an address");
	return (int)answer(s, 0);
}

int rs_real_getsockopt(int fd, int level, int name, void *val,
    socklen_t *len)
{
	struct fk_sock *k = fk_sock(fd);

	if (level == SOL_SOCKET && name == SO_ERROR) {
		const struct fk_step *s = take(FK_SO_ERROR, fd);

		*(int *)val = s ? s->so_error : 0;
		*len = sizeof(int);
		return (int)answer(s, 0);
	}
	count_call();
	if (level == SOL_SOCKET && name == SO_TYPE)
		*(int *)val = k->type;
	else if (level == IPPROTO_TCP && name == TCP_USER_TIMEOUT)
		*(unsigned *)val = k->user_timeout;
	else if (level == SOL_SOCKET && (name == SO_SNDTIMEO ||
	    name == SO_RCVTIMEO))
		*(struct timeval *)val = name == SO_SNDTIMEO ? k->sndtimeo :
		    k->rcvtimeo;
	else {
		wrong("getsockopt(%d, %d, %d) not modelled", fd, level, name);
		errno = ENOPROTOOPT;
		return -1;
	}
	return 0;
}

int rs_real_setsockopt(int fd, int level, int name, const void *val,
    socklen_t len)
{
	struct fk_sock *k = fk_sock(fd);

	(void)len;
	count_call();
	if (level != IPPROTO_TCP || name != TCP_USER_TIMEOUT) {
		wrong("setsockopt(%d, %d, %d) not modelled", fd, level, name);
		errno = ENOPROTOOPT;
		return -1;
	}
	k->user_timeout = *(const unsigned *)val;
	if (k->user_timeout > k->user_timeout_peak)
		k->user_timeout_peak = k->user_timeout;
	k->user_timeout_sets++;
	return 0;
}

int rs_real_fcntl(int fd, int cmd, uintptr_t arg)
{
	struct fk_sock *k = fk_sock(fd);

	count_call();
	if (cmd == F_GETFL)
		return k->flags;
	if (cmd == F_SETFL) {
		k->flags = (int)arg;
		k->setfl_calls++;
		return 0;
	}
	wrong("fcntl(%d, %d) not modelled", fd, cmd);
	errno = EINVAL;
	return -1;
}

int rs_real_fcntl64(int fd, int cmd, uintptr_t arg)
{
	return rs_real_fcntl(fd, cmd, arg);
}

int __wrap_getpeername(int fd, struct sockaddr *sa, socklen_t *len);

int __wrap_getpeername(int fd, struct sockaddr *sa, socklen_t *len)
{
	const struct fk_step *s = take(FK_GETPEERNAME, fd);

	if (s && !s->err && sa && len) {
		struct sockaddr_storage ss;
		socklen_t l;

		fk_addr(&ss, &l, 1);
		memcpy(sa, &ss, *len < l ? *len : l);
		*len = l;
	}
	return (int)answer(s, 0);
}

/* ---- waits ---- */

/* What each wait watched: a copy of its poll array or interest list. */
#define MAX_WAITS 64
#define MAX_WATCH 8

static struct {
	int n;
	struct fk_ready w[MAX_WATCH];
} waits[MAX_WAITS];
static int nwaits;

static void note_watch(int fd, unsigned events)
{
	if (nwaits < MAX_WAITS && waits[nwaits].n < MAX_WATCH)
		waits[nwaits].w[waits[nwaits].n++] =
		    (struct fk_ready){ fd, events };
}

int fk_watched(int i, int fd)
{
	for (int j = 0; i >= 0 && i < nwaits && j < waits[i].n; j++)
		if (waits[i].w[j].fd == fd)
			return (int)waits[i].w[j].events;
	return -1;
}

int fk_waits(void)
{
	return nwaits;
}

/* The kernel's poll over fds, for the step s; returns the ready count. */
static int fake_poll(const struct fk_step *s, struct pollfd *fds, nfds_t n)
{
	int found = 0;

	for (nfds_t i = 0; i < n; i++) {
		fds[i].revents = 0;
		if (fds[i].fd < 0)
			continue;
		note_watch(fds[i].fd, (unsigned short)fds[i].events);
		fds[i].revents = (short)(ready_of(s, fds[i].fd) &
		    (unsigned short)(fds[i].events | POLLERR | POLLHUP |
			POLLNVAL));
		found += fds[i].revents != 0;
	}
	if (nwaits < MAX_WAITS)
		nwaits++;
	return found;
}

static int poll_step(enum fk_fn fn, struct pollfd *fds, nfds_t n, int tmo)
{
	const struct fk_step *s = take(fn, -1);
	int found = s ? fake_poll(s, fds, n) : 0;

	check_tmo(s, tmo);
	pass_time(s, found, tmo);
	return (int)answer(s, found);
}

int rs_real_poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	return poll_step(FK_POLL, fds, n, timeout_ms);
}

int rs_real_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
    const sigset_t *mask)
{
	(void)mask;
	return poll_step(FK_PPOLL, fds, n, tmo_of(tmo));
}

/* select through the poll model: each set bit becomes one pollfd. */
static int select_step(enum fk_fn fn, int n, fd_set *r, fd_set *w,
    fd_set *x, int tmo)
{
	const struct fk_step *s = take(fn, -1);
	int found = 0;

	check_tmo(s, tmo);
	for (int fd = 0; s && fd < n && fd < FK_MAX_FD; fd++) {
		unsigned got = ready_of(s, fd);

		if (r && FD_ISSET(fd, r) && !(got & POLLIN))
			FD_CLR(fd, r);
		if (w && FD_ISSET(fd, w) && !(got & POLLOUT))
			FD_CLR(fd, w);
		if (x && FD_ISSET(fd, x) && !(got & POLLPRI))
			FD_CLR(fd, x);
		found += (r && FD_ISSET(fd, r)) + (w && FD_ISSET(fd, w)) +
		    (x && FD_ISSET(fd, x));
	}
	pass_time(s, found, tmo);
	return (int)answer(s, found);
}

int rs_real_select(int n, fd_set *r, fd_set *w, fd_set *e,
    struct timeval *tmo)
{
	return select_step(FK_SELECT, n, r, w, e, tmo ?
	    (int)(tmo->tv_sec * 1000 + tmo->tv_usec / 1000) : -1);
}

int rs_real_pselect(int n, fd_set *r, fd_set *w, fd_set *e,
    const struct timespec *tmo, const sigset_t *mask)
{
	(void)mask;
	return select_step(FK_PSELECT, n, r, w, e, tmo_of(tmo));
}

/* ---- epoll: the kernel's interest lists ---- */

static int reg_find(int epfd, int fd)
{
	for (int i = 0; i < MAX_REGS; i++)
		if (reg_used[i] && regs[i].epfd == epfd && regs[i].fd == fd)
			return i;
	return -1;
}

const struct fk_epreg *fk_epoll_reg(int epfd, int fd)
{
	int i = reg_find(epfd, fd);

	return i < 0 ? NULL : &regs[i];
}

int fk_epoll_ctl_count(int op)
{
	return op >= 1 && op <= 3 ? ctl_count[op] : 0;
}

static int reg_add(int epfd, int fd, const struct epoll_event *ev)
{
	for (int i = 0; i < MAX_REGS; i++) {
		if (reg_used[i])
			continue;
		reg_used[i] = true;
		regs[i] = (struct fk_epreg){ epfd, fd, ev->events,
			ev->data.u64, false };
		return 0;
	}
	wrong("more than %d epoll registrations", MAX_REGS);
	return -ENOMEM;
}

/* epoll_ctl as Linux answers it, on the model. */
static int ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	int i = reg_find(epfd, fd);

	if (op < 1 || op > 3)
		return -EINVAL;
	ctl_count[op]++;
	if (op == EPOLL_CTL_ADD)
		return i >= 0 ? -EEXIST : reg_add(epfd, fd, ev);
	if (i < 0)
		return -ENOENT;
	if (op == EPOLL_CTL_DEL) {
		reg_used[i] = false;
		return 0;
	}
	if ((regs[i].events | ev->events) & EPOLLEXCLUSIVE)
		return -EINVAL;
	regs[i].events = ev->events;
	regs[i].data = ev->data.u64;
	regs[i].disarmed = false;
	return 0;
}

int rs_real_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	count_call();
	int r = ctl(epfd, op, fd, ev);

	if (r < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

/* The kernel's epoll wait over the model, for the step s. */
static int fake_epoll(const struct fk_step *s, int epfd,
    struct epoll_event *ev, int max)
{
	int n = 0;

	for (int i = 0; i < MAX_REGS; i++) {
		struct fk_epreg *g = &regs[i];

		if (!reg_used[i] || g->epfd != epfd)
			continue;
		note_watch(g->fd, g->disarmed ? 0 : g->events);
		unsigned got = ready_of(s, g->fd) &
		    (g->events | EPOLLERR | EPOLLHUP);

		if (g->disarmed || !got || n >= max)
			continue;
		ev[n].events = got;
		ev[n++].data.u64 = g->data;
		g->disarmed = (g->events & EPOLLONESHOT) != 0;
	}
	if (nwaits < MAX_WAITS)
		nwaits++;
	return n;
}

static int epoll_step(enum fk_fn fn, int epfd, struct epoll_event *ev,
    int max, int tmo)
{
	const struct fk_step *s = take(fn, epfd);
	int found = s ? fake_epoll(s, epfd, ev, max) : 0;

	check_tmo(s, tmo);
	if (s && s->max && s->max != max)
		wrong("%s: maxevents %d, expected %d", fn_names[fn], max,
		    s->max);
	pass_time(s, found, tmo);
	return (int)answer(s, found);
}

int rs_real_epoll_wait(int epfd, struct epoll_event *ev, int max,
    int timeout_ms)
{
	return epoll_step(FK_EPOLL_PWAIT, epfd, ev, max, timeout_ms);
}

int rs_real_epoll_pwait(int epfd, struct epoll_event *ev, int max,
    int timeout_ms, const sigset_t *mask)
{
	(void)mask;
	return epoll_step(FK_EPOLL_PWAIT, epfd, ev, max, timeout_ms);
}

int rs_real_epoll_pwait2(int epfd, struct epoll_event *ev, int max,
    const struct timespec *tmo, const sigset_t *mask)
{
	(void)mask;
	return epoll_step(FK_EPOLL_PWAIT2, epfd, ev, max, tmo_of(tmo));
}

/* ---- transfers ---- */

/* Everything the engines sent, in order, for the tests to read. */
static char sent[4096];
static size_t nsent;

const char *fk_sent(size_t *len)
{
	*len = nsent;
	return sent;
}

static void check_xfer(const struct fk_step *s, size_t len, int flags)
{
	if (!s)
		return;
	if (s->len && s->len != len)
		wrong("%s: %zu bytes offered, expected %zu", fn_names[s->fn],
		    len, s->len);
	if ((flags & s->flags) != s->flags)
		wrong("%s: flags %#x lack %#x", fn_names[s->fn], flags,
		    s->flags);
}

static size_t iov_len(const struct iovec *iov, size_t cnt)
{
	size_t n = 0;

	for (size_t i = 0; i < cnt; i++)
		n += iov[i].iov_len;
	return n;
}

/* A read: scatters the step's bytes over iov; returns the count. */
static ssize_t fake_in(enum fk_fn fn, int fd, const struct iovec *iov,
    size_t cnt, int flags)
{
	const struct fk_step *s = take(fn, fd);
	size_t cap = iov_len(iov, cnt), have, done = 0;

	check_xfer(s, cap, flags);
	if (!s || s->err)
		return answer(s, 0);
	have = s->data ? strlen(s->data) : 0;
	if (s->ret >= 0 && (size_t)s->ret < have)
		have = (size_t)s->ret;
	for (size_t i = 0; i < cnt && done < have; i++) {
		size_t k = iov[i].iov_len < have - done ? iov[i].iov_len :
		    have - done;

		memcpy(iov[i].iov_base, s->data + done, k);
		done += k;
	}
	return answer(s, (long)done);
}

/* A write: takes ret bytes (-1: all) of iov into sent[]. */
static ssize_t fake_out(enum fk_fn fn, int fd, const struct iovec *iov,
    size_t cnt, int flags)
{
	const struct fk_step *s = take(fn, fd);
	size_t offered = iov_len(iov, cnt), take_n, done = 0;

	check_xfer(s, offered, flags);
	if (!s || s->err)
		return answer(s, 0);
	take_n = s->ret < 0 || (size_t)s->ret > offered ? offered :
	    (size_t)s->ret;
	for (size_t i = 0; i < cnt && done < take_n; i++) {
		size_t k = iov[i].iov_len < take_n - done ? iov[i].iov_len :
		    take_n - done;

		if (nsent + k <= sizeof(sent)) {
			memcpy(sent + nsent, iov[i].iov_base, k);
			nsent += k;
		}
		done += k;
	}
	return answer(s, (long)done);
}

ssize_t rs_real_read(int fd, void *buf, size_t n)
{
	struct iovec v = { buf, n };

	return fake_in(FK_READ, fd, &v, 1, 0);
}

ssize_t rs_real_readv(int fd, const struct iovec *iov, int cnt)
{
	return fake_in(FK_READV, fd, iov, (size_t)cnt, 0);
}

ssize_t rs_real_recv(int fd, void *buf, size_t n, int flags)
{
	struct iovec v = { buf, n };

	return fake_in(FK_RECV, fd, &v, 1, flags);
}

ssize_t rs_real_recvfrom(int fd, void *buf, size_t n, int flags,
    struct sockaddr *sa, socklen_t *len)
{
	struct iovec v = { buf, n };

	(void)sa;
	(void)len;
	return fake_in(FK_RECVFROM, fd, &v, 1, flags);
}

ssize_t rs_real_recvmsg(int fd, struct msghdr *msg, int flags)
{
	msg->msg_flags = 0;
	return fake_in(FK_RECVMSG, fd, msg->msg_iov, msg->msg_iovlen, flags);
}

int rs_real_recvmmsg(int fd, struct mmsghdr *v, unsigned n, int flags,
    struct timespec *tmo)
{
	const struct fk_step *s = take(FK_RECVMMSG, fd);

	(void)v;
	(void)tmo;
	check_xfer(s, n, flags);
	return (int)answer(s, s ? s->ret : 0);
}

ssize_t rs_real_write(int fd, const void *buf, size_t n)
{
	struct iovec v = { (void *)buf, n };

	return fake_out(FK_WRITE, fd, &v, 1, 0);
}

ssize_t rs_real_writev(int fd, const struct iovec *iov, int cnt)
{
	return fake_out(FK_WRITEV, fd, iov, (size_t)cnt, 0);
}

ssize_t rs_real_send(int fd, const void *buf, size_t n, int flags)
{
	struct iovec v = { (void *)buf, n };

	return fake_out(FK_SEND, fd, &v, 1, flags);
}

ssize_t rs_real_sendto(int fd, const void *buf, size_t n, int flags,
    const struct sockaddr *sa, socklen_t len)
{
	struct iovec v = { (void *)buf, n };

	(void)sa;
	(void)len;
	return fake_out(FK_SENDTO, fd, &v, 1, flags);
}

ssize_t rs_real_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	return fake_out(FK_SENDMSG, fd, msg->msg_iov, msg->msg_iovlen, flags);
}

int rs_real_sendmmsg(int fd, struct mmsghdr *v, unsigned n, int flags)
{
	const struct fk_step *s = take(FK_SENDMMSG, fd);

	(void)v;
	check_xfer(s, n, flags);
	return (int)answer(s, s ? s->ret : 0);
}

void fk_real_reset(void)
{
	memset(reg_used, 0, sizeof(reg_used));
	memset(ctl_count, 0, sizeof(ctl_count));
	memset(waits, 0, sizeof(waits));
	nwaits = 0;
	nsent = 0;
}

/* ---- calls no engine makes: each is a mismatch ---- */

#define UNEXPECTED(ret, name, params)                                   \
	ret rs_real_##name params                                       \
	{                                                               \
		count_call();                                           \
		wrong("unexpected call of " #name);                     \
		errno = EIO;                                            \
		return (ret)-1;                                         \
	}

/* Their parameters are there for the prototypes only. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

UNEXPECTED(int, socket, (int d, int t, int p))
UNEXPECTED(int, socketpair, (int d, int t, int p, int sv[2]))
UNEXPECTED(int, accept, (int fd, struct sockaddr *sa, socklen_t *len))
UNEXPECTED(int, accept4, (int fd, struct sockaddr *sa, socklen_t *l, int f))
UNEXPECTED(int, close, (int fd))
UNEXPECTED(int, close_range, (unsigned a, unsigned b, int f))
UNEXPECTED(int, dup, (int fd))
UNEXPECTED(int, dup2, (int fd, int fd2))
UNEXPECTED(int, dup3, (int fd, int fd2, int f))
UNEXPECTED(int, ioctl, (int fd, unsigned long req, uintptr_t arg))
UNEXPECTED(int, getaddrinfo, (const char *n, const char *s,
    const struct addrinfo *h, struct addrinfo **r))
UNEXPECTED(struct hostent *, gethostbyname, (const char *n))
UNEXPECTED(struct hostent *, gethostbyname2, (const char *n, int af))
UNEXPECTED(int, gethostbyname_r, (const char *n, struct hostent *h, char *b,
    size_t l, struct hostent **r, int *e))
UNEXPECTED(int, gethostbyname2_r, (const char *n, int af, struct hostent *h,
    char *b, size_t l, struct hostent **r, int *e))
