/* SPDX-License-Identifier: MIT */
/*
 * sslreal.c - finds OpenSSL's functions: the next definition after this
 * library, else the libssl already loaded (see sslreal.h).
 */
#include "sslreal.h"

#include <dlfcn.h>

#include "guard.h"

/* The libraries asked when RTLD_NEXT finds nothing (libssl's X509 and
   ERR functions are libcrypto's; GnuTLS's, gnutls.c). */
static const char *const sonames[] = { "libssl.so.3", "libssl.so.1.1",
	"libcrypto.so.3", "libcrypto.so.1.1", "libgnutls.so.30" };

static __attribute__((noinline, cold)) void *resolve(void **slot,
    const char *name)
{
	void *p, *lib;

	rs_guard_enter();
	p = dlsym(RTLD_NEXT, name);
	for (size_t i = 0; !p && i < sizeof(sonames) / sizeof(*sonames); i++)
		if ((lib = dlopen(sonames[i], RTLD_LAZY | RTLD_NOLOAD))) {
			p = dlsym(lib, name);
			dlclose(lib);	/* NOLOAD took a reference */
		}
	rs_guard_leave();
	if (p)
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	return p;
}

void *rs_ssl_sym(void **slot, const char *name)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	return __builtin_expect(p != NULL, 1) ? p : resolve(slot, name);
}

void *rs_ssl_peer_cert(const void *ssl)
{
	void *(*fn)(const void *) = rs_ssl_SSL_get1_peer_certificate();

	if (fn == NULL)
		fn = rs_ssl_SSL_get_peer_certificate();
	return fn != NULL ? fn(ssl) : NULL;
}
