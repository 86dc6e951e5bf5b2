/* SPDX-License-Identifier: MIT */
/*
 * sslreal.h - OpenSSL's own functions behind the names this library
 * interposes, and the few more it calls, resolved lazily: the library
 * never links libssl, and a program that never loads it never pays for
 * any of this.  libssl may arrive late and privately (python's _ssl is
 * dlopen'ed with RTLD_LOCAL, so RTLD_NEXT cannot see it): then the loaded
 * copy is asked for by name (RTLD_NOLOAD).
 *
 * The types are opaque here: an SSL* is a void *.  Thread-safe as
 * real.h is (benign races store the same pointer).
 */
#ifndef RS_SSLREAL_H
#define RS_SSLREAL_H

#include <stddef.h>
#include <sys/types.h>

/* SSL_get_error() values (ssl.h; the same in 1.1 and 3). */
#define RS_SSL_ERROR_NONE 0
#define RS_SSL_ERROR_SSL 1
#define RS_SSL_ERROR_WANT_READ 2
#define RS_SSL_ERROR_WANT_WRITE 3
#define RS_SSL_ERROR_SYSCALL 5
#define RS_SSL_ERROR_ZERO_RETURN 6

/* BIO_ctrl()'s command for BIO_ctrl_pending() (bio.h). */
#define RS_BIO_CTRL_PENDING 10

/* SSL_set_shutdown() flags. */
#define RS_SSL_SENT_SHUTDOWN 1
#define RS_SSL_RECEIVED_SHUTDOWN 2

/*
 * Returns the real function called name (an OpenSSL entry point), or
 * NULL when no libssl is loaded that has it.  slot caches it.
 */
void *rs_ssl_sym(void **slot, const char *name);

#define RS_SSL_FN(ret, name, params)                                    \
	static inline ret (*rs_ssl_##name(void)) params                 \
	{                                                               \
		static void *slot;                                      \
		return (ret(*) params)rs_ssl_sym(&slot, #name);          \
	}

RS_SSL_FN(int, SSL_read, (void *s, void *buf, int n))
RS_SSL_FN(int, SSL_read_ex, (void *s, void *buf, size_t n, size_t *got))
RS_SSL_FN(int, SSL_peek, (void *s, void *buf, int n))
RS_SSL_FN(int, SSL_peek_ex, (void *s, void *buf, size_t n, size_t *got))
RS_SSL_FN(int, SSL_write, (void *s, const void *buf, int n))
RS_SSL_FN(int, SSL_write_ex, (void *s, const void *buf, size_t n,
    size_t *put))
RS_SSL_FN(int, SSL_get_error, (const void *s, int ret))
RS_SSL_FN(int, SSL_pending, (const void *s))
RS_SSL_FN(int, SSL_has_pending, (const void *s))
RS_SSL_FN(int, SSL_set_fd, (void *s, int fd))
RS_SSL_FN(int, SSL_connect, (void *s))
RS_SSL_FN(int, SSL_do_handshake, (void *s))
RS_SSL_FN(int, SSL_shutdown, (void *s))
RS_SSL_FN(void, SSL_free, (void *s))
RS_SSL_FN(int, SSL_clear, (void *s))
RS_SSL_FN(void *, SSL_get1_session, (void *s))
RS_SSL_FN(int, SSL_set_session, (void *s, void *sess))
RS_SSL_FN(void, SSL_SESSION_free, (void *sess))
RS_SSL_FN(void, SSL_set_shutdown, (void *s, int mode))
/* libssl 3's name; 1.1 has only SSL_get_peer_certificate (sslreal.c). */
RS_SSL_FN(void *, SSL_get1_peer_certificate, (const void *s))
RS_SSL_FN(void *, SSL_get_peer_certificate, (const void *s))
RS_SSL_FN(int, X509_cmp, (const void *a, const void *b))
RS_SSL_FN(void, X509_free, (void *x))
RS_SSL_FN(void, ERR_clear_error, (void))
RS_SSL_FN(int, SSL_set_alpn_protos, (void *s, const unsigned char *p,
    unsigned len))
RS_SSL_FN(int, SSL_CTX_set_alpn_protos, (void *c, const unsigned char *p,
    unsigned len))
RS_SSL_FN(void, SSL_CTX_free, (void *c))
RS_SSL_FN(int, SSL_is_server, (const void *s))
RS_SSL_FN(int, SSL_get_fd, (const void *s))
RS_SSL_FN(int, SSL_accept, (void *s))
RS_SSL_FN(void *, SSL_get_SSL_CTX, (const void *s))
RS_SSL_FN(size_t, SSL_get_client_random, (const void *s, unsigned char *out,
    size_t len))
RS_SSL_FN(void *, SSL_get_wbio, (const void *s))
RS_SSL_FN(long, BIO_ctrl, (void *b, int cmd, long larg, void *parg))
RS_SSL_FN(int, BIO_read, (void *b, void *buf, int n))
RS_SSL_FN(void, SSL_get0_alpn_selected, (const void *s,
    const unsigned char **p, unsigned *len))

/* GnuTLS's (libgnutls.so.30), for gnutls.c; the same lazy resolution. */
RS_SSL_FN(ssize_t, gnutls_record_recv, (void *s, void *buf, size_t n))
RS_SSL_FN(ssize_t, gnutls_record_send, (void *s, const void *buf, size_t n))
RS_SSL_FN(ssize_t, gnutls_record_send2, (void *s, const void *buf, size_t n,
    size_t pad, unsigned flags))
RS_SSL_FN(int, gnutls_record_uncork, (void *s, unsigned flags))
RS_SSL_FN(int, gnutls_handshake, (void *s))
RS_SSL_FN(int, gnutls_alpn_set_protocols, (void *s, const void *names,
    unsigned count, unsigned flags))
RS_SSL_FN(int, gnutls_alpn_get_selected_protocol, (void *s, void *name))
RS_SSL_FN(size_t, gnutls_record_check_pending, (void *s))
RS_SSL_FN(void, gnutls_transport_set_int2, (void *s, int r, int w))
RS_SSL_FN(void, gnutls_transport_get_int2, (void *s, int *r, int *w))
RS_SSL_FN(void, gnutls_transport_set_ptr, (void *s, void *p))
RS_SSL_FN(void, gnutls_transport_set_ptr2, (void *s, void *r, void *w))
RS_SSL_FN(void, gnutls_deinit, (void *s))

/*
 * The certificate the peer of ssl presented (a reference the caller
 * frees with X509_free), or NULL.
 */
void *rs_ssl_peer_cert(const void *ssl);

#endif /* RS_SSLREAL_H */
