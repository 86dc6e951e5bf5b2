/* SPDX-License-Identifier: MIT */
/*
 * fake_real.c - the scripted rs_real_*() calls of connect, socket options
 * and transfers, and the calls no engine makes (each a mismatch); the
 * waits and epoll are in fake_wait.c.  See fake.h.
 */
#include "fake_script.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "real.h"

/*
 * The pointers of realfast.h stay NULL, so that its inline forwarders call
 * the scripted rs_real_*() below.
 */
void *rs_real_slot_read, *rs_real_slot_readv, *rs_real_slot_recv,
    *rs_real_slot_recvfrom, *rs_real_slot_recvmsg, *rs_real_slot_write,
    *rs_real_slot_writev, *rs_real_slot_send, *rs_real_slot_sendto,
    *rs_real_slot_sendmsg, *rs_real_slot_recvmmsg, *rs_real_slot_sendmmsg,
    *rs_real_slot_epoll_ctl, *rs_real_slot_socket, *rs_real_slot_connect,
    *rs_real_slot_setsockopt, *rs_real_slot_close, *rs_real_slot_poll;

/* ---- connect and socket options ---- */

int rs_real_connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	const struct fk_step *s = fk_take(FK_CONNECT, fd);
	bool unspec = sa && len >= sizeof(sa_family_t) &&
	    sa->sa_family == AF_UNSPEC;

	if (s && s->unspec != unspec)
		fk_wrong("connect(%d): %s, expected %s", fd,
		    unspec ? "AF_UNSPEC" : "an address",
		    s->unspec ? "AF_UNSPEC" : "an address");
	return (int)fk_answer(s, 0);
}

int rs_real_getsockopt(int fd, int level, int name, void *val,
    socklen_t *len)
{
	struct fk_sock *k = fk_sock(fd);

	if (level == SOL_SOCKET && name == SO_ERROR) {
		const struct fk_step *s = fk_take(FK_SO_ERROR, fd);

		*(int *)val = s ? s->so_error : 0;
		*len = sizeof(int);
		return (int)fk_answer(s, 0);
	}
	fk_count_call();
	if (level == SOL_SOCKET && name == SO_TYPE)
		*(int *)val = k->type;
	else if (level == IPPROTO_TCP && name == TCP_USER_TIMEOUT)
		*(unsigned *)val = k->user_timeout;
	else if (level == SOL_SOCKET && (name == SO_SNDTIMEO ||
	    name == SO_RCVTIMEO))
		*(struct timeval *)val = name == SO_SNDTIMEO ? k->sndtimeo :
		    k->rcvtimeo;
	else if (level == SOL_SOCKET && name == SO_RCVLOWAT)
		*(int *)val = k->rcvlowat;
	else {
		fk_wrong("getsockopt(%d, %d, %d) not modelled", fd, level, name);
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
	fk_count_call();
	if (level == SOL_SOCKET && (name == SO_SNDTIMEO ||
	    name == SO_RCVTIMEO)) {
		*(name == SO_SNDTIMEO ? &k->sndtimeo : &k->rcvtimeo) =
		    *(const struct timeval *)val;
		return 0;
	}
	if (level == SOL_SOCKET && name == SO_RCVLOWAT) {
		k->rcvlowat = *(const int *)val;
		if (k->rcvlowat > k->rcvlowat_peak)
			k->rcvlowat_peak = k->rcvlowat;
		k->rcvlowat_sets++;
		return 0;
	}
	if (level != IPPROTO_TCP || name != TCP_USER_TIMEOUT) {
		fk_wrong("setsockopt(%d, %d, %d) not modelled", fd, level, name);
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

	fk_count_call();
	if (cmd == F_GETFL)
		return k->flags;
	if (cmd == F_SETFL) {
		k->flags = (int)arg;
		k->setfl_calls++;
		return 0;
	}
	fk_wrong("fcntl(%d, %d) not modelled", fd, cmd);
	errno = EINVAL;
	return -1;
}

int rs_real_fcntl64(int fd, int cmd, uintptr_t arg)
{
	return rs_real_fcntl(fd, cmd, arg);
}

/* FIONREAD (the peer's bytes queued) is answered from the model. */
int rs_real_ioctl(int fd, unsigned long req, uintptr_t arg)
{
	fk_count_call();
	if (req != FIONREAD) {
		fk_wrong("ioctl(%d, %#lx) not modelled", fd, req);
		errno = EINVAL;
		return -1;
	}
	*(int *)arg = fk_sock(fd)->inq;
	return 0;
}

int __wrap_getpeername(int fd, struct sockaddr *sa, socklen_t *len);

int __wrap_getpeername(int fd, struct sockaddr *sa, socklen_t *len)
{
	const struct fk_step *s = fk_take(FK_GETPEERNAME, fd);

	if (s && !s->err && sa && len) {
		struct sockaddr_storage ss;
		socklen_t l;

		fk_addr(&ss, &l, 1);
		memcpy(sa, &ss, *len < l ? *len : l);
		*len = l;
	}
	return (int)fk_answer(s, 0);
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
		fk_wrong("%s: %zu bytes offered, expected %zu", fk_fn_names[s->fn],
		    len, s->len);
	if ((flags & s->flags) != s->flags)
		fk_wrong("%s: flags %#x lack %#x", fk_fn_names[s->fn], flags,
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
	const struct fk_step *s = fk_take(fn, fd);
	size_t cap = iov_len(iov, cnt), have, done = 0;

	check_xfer(s, cap, flags);
	if (!s || s->err)
		return fk_answer(s, 0);
	have = s->data ? strlen(s->data) : 0;
	if (s->ret >= 0 && (size_t)s->ret < have)
		have = (size_t)s->ret;
	for (size_t i = 0; i < cnt && done < have; i++) {
		size_t k = iov[i].iov_len < have - done ? iov[i].iov_len :
		    have - done;

		memcpy(iov[i].iov_base, s->data + done, k);
		done += k;
	}
	return fk_answer(s, (long)done);
}

/* Appends the first n bytes of iov to sent[]; returns how many it had. */
static size_t take_bytes(const struct iovec *iov, size_t cnt, size_t n)
{
	size_t done = 0;

	for (size_t i = 0; i < cnt && done < n; i++) {
		size_t k = iov[i].iov_len < n - done ? iov[i].iov_len :
		    n - done;

		if (nsent + k <= sizeof(sent)) {
			memcpy(sent + nsent, iov[i].iov_base, k);
			nsent += k;
		}
		done += k;
	}
	return done;
}

/* A write: takes ret bytes (-1: all) of iov into sent[]. */
static ssize_t fake_out(enum fk_fn fn, int fd, const struct iovec *iov,
    size_t cnt, int flags)
{
	const struct fk_step *s = fk_take(fn, fd);
	size_t offered = iov_len(iov, cnt), take_n;

	check_xfer(s, offered, flags);
	if (!s || s->err)
		return fk_answer(s, 0);
	take_n = s->ret < 0 || (size_t)s->ret > offered ? offered :
	    (size_t)s->ret;
	return fk_answer(s, (long)take_bytes(iov, cnt, take_n));
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
	const struct fk_step *s = fk_take(FK_RECVMMSG, fd);

	(void)v;
	(void)tmo;
	check_xfer(s, n, flags);
	return (int)fk_answer(s, s ? s->ret : 0);
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

/*
 * sendmmsg: ret messages are sent (at most n), each whole except the last
 * when the step says part (its bytes); msg_len is set as the kernel does.
 */
int rs_real_sendmmsg(int fd, struct mmsghdr *v, unsigned n, int flags)
{
	const struct fk_step *s = fk_take(FK_SENDMMSG, fd);

	check_xfer(s, n, flags);
	if (!s || s->err)
		return (int)fk_answer(s, 0);
	for (long i = 0; i < s->ret && i < (long)n; i++) {
		const struct msghdr *h = &v[i].msg_hdr;
		size_t want = iov_len(h->msg_iov, h->msg_iovlen);

		if (i == s->ret - 1 && s->part && s->part < want)
			want = s->part;
		v[i].msg_len = (unsigned)take_bytes(h->msg_iov,
		    h->msg_iovlen, want);
	}
	return (int)fk_answer(s, s->ret);
}

void fk_xfer_reset(void)
{
	nsent = 0;
}

/* ---- calls no engine makes: each is a mismatch ---- */

#define UNEXPECTED(ret, name, params)                                   \
	ret rs_real_##name params                                       \
	{                                                               \
		fk_count_call();                                           \
		fk_wrong("unexpected call of " #name);                     \
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
