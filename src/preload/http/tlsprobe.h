/* SPDX-License-Identifier: MIT */
/*
 * tlsprobe.h - which socket a TLS session's records go through, learnt
 * while the library itself calls into the TLS library for a session it
 * has not yet tied to a descriptor: a program may give the session a BIO
 * of its own (curl does), whose descriptor no TLS call reveals, but the
 * session's records reach the socket through the wrappers of this
 * library, on the same thread, during that call.
 *
 * Thread-local; costs the socket paths of HTTP rules one load.
 */
#ifndef RS_TLSPROBE_H
#define RS_TLSPROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "fdtable.h"

/* -2: not probing; -1: probing, no socket seen yet; else the socket. */
extern __thread int rs_tls_probe_fd __attribute__((tls_model("initial-exec")));

/*
 * A socket call on fd of an HTTP rule: true when a TLS call of the
 * library's is under way on this thread, which then learns fd; the call
 * must then carry the records as they are, never tracked as HTTP.
 */
static inline bool rs_tls_probed(int fd)
{
	if (__builtin_expect(rs_tls_probe_fd == -2, 1))
		return false;
	rs_tls_probe_fd = fd;
	return true;
}

/*
 * Around the TLS library's call for a session whose socket is not known:
 * rs_tls_probe_begin() starts learning, rs_tls_probe_end() stops and
 * returns the socket learnt, or -1 when the call moved no record on a
 * socket of an HTTP rule.
 */
static inline void rs_tls_probe_begin(void)
{
	rs_tls_probe_fd = -1;
}

static inline int rs_tls_probe_end(void)
{
	int fd = rs_tls_probe_fd;

	rs_tls_probe_fd = -2;
	return fd;
}

/*
 * The socket of an `http` rule this thread connected last (-1: none): a
 * session whose descriptor is not known before its handshake (curl's
 * BIO) is taken for that socket's when its ALPN offer is made (alpn.h).
 */
extern __thread int rs_tls_connect_fd __attribute__((tls_model("initial-exec")));

/*
 * The socket an OpenSSL call on an inbound connection (a server's) is
 * under way on (-1: none): its records are not the HTTP the tracker
 * follows there; the call feeds the plaintext itself (tls/inbound.h).
 */
extern __thread int rs_tls_plain_fd __attribute__((tls_model("initial-exec")));

/*
 * Where the deadline tracker's sends go during a TLS write of the program
 * (NULL: the socket): the session's plaintext, so that a request head
 * gets its deadline header on its way into SSL_write.  send returns the
 * bytes taken or -errno.
 */
struct rs_tls_sink {
	ssize_t (*send)(void *ctx, const void *p, size_t n);
	void *ctx;
};
extern __thread const struct rs_tls_sink *rs_tls_sink_now
    __attribute__((tls_model("initial-exec")));

/*
 * Sessions whose records the program moves itself, through memory BIOs
 * it pumps (python's asyncio, ssl.MemoryBIO): no TLS call of theirs
 * touches a socket, so the socket is learnt from the ClientHello the
 * program writes on it.  The first bytes a program writes on a socket of
 * an `http` rule, outside any TLS call, are looked at: a ClientHello's
 * client random is noted with the socket; the session whose random it
 * is takes that socket when its next TLS call comes (tls/membio.h).
 * rs_tls_hellos counts the notes waiting: 0 (one load) for every
 * program that has none.
 */
extern int rs_tls_hellos;

/*
 * The program's first write on fd (entry e): p[0..n) may be a ClientHello.
 * Returns whether it was one, and noted.
 */
bool rs_tls_hello_note(const struct rs_fd *e, int fd, const void *p, size_t n);

/*
 * The socket whose ClientHello carried client random `random` (32
 * bytes), still open since: its note is taken.  -1 when none.
 */
int rs_tls_hello_match(const unsigned char *random);

#endif /* RS_TLSPROBE_H */
