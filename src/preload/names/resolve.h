/* SPDX-License-Identifier: MIT */
/*
 * resolve.h - the resolver calls the library wraps: getaddrinfo() and the
 * gethostbyname*() family.  Each answer teaches the names table which
 * name the program gave each address (host rules, failover); a transient
 * failure (EAI_AGAIN, TRY_AGAIN) is retried as the rule of the name says
 * (SPEC 5d), sleeping in the calling thread, which the lookup blocks
 * anyway.  Thread-safe; nothing is held across the real calls or sleeps.
 * Return values and errors are exactly those of the libc functions.
 */
#ifndef RS_RESOLVE_H
#define RS_RESOLVE_H

#include <netdb.h>
#include <stddef.h>

int rs_resolve_getaddrinfo(const char *node, const char *service,
    const struct addrinfo *hints, struct addrinfo **res);

struct hostent *rs_resolve_gethostbyname(const char *name);

struct hostent *rs_resolve_gethostbyname2(const char *name, int af);

int rs_resolve_gethostbyname_r(const char *name, struct hostent *ret,
    char *buf, size_t len, struct hostent **result, int *h_errnop);

int rs_resolve_gethostbyname2_r(const char *name, int af,
    struct hostent *ret, char *buf, size_t len, struct hostent **result,
    int *h_errnop);

#endif /* RS_RESOLVE_H */
