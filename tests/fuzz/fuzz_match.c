/* SPDX-License-Identifier: MIT */
/*
 * fuzz_match.c - libFuzzer target for the `match:` grammar.
 *
 * The input is split at its first NUL byte: the text before it is parsed
 * as a match value, the bytes after it derive a target (family, address,
 * port, host name, unix path) that the parsed match is tested against.
 * Any input must parse or be refused with a message, and any target must
 * be tested without a crash or an out-of-bounds access.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Builds a target from raw bytes; strings point into the copies given. */
static void derive(struct rs_target *t, const uint8_t *b, size_t n,
    char *host, char *path)
{
	static const int families[] = { AF_INET, AF_INET6, AF_UNIX };

	memset(t, 0, sizeof(*t));
	t->family = families[(n ? b[0] : 0) % 3];
	for (size_t i = 0; i < 16 && i + 1 < n; i++)
		t->addr[i] = b[i + 1];
	t->port = n > 18 ? (uint16_t)(b[17] << 8 | b[18]) : 80;
	size_t rest = n > 19 ? n - 19 : 0;

	memcpy(host, b + (n - rest), rest);
	host[rest] = '\0';
	memcpy(path, host, rest + 1);
	if (t->family == AF_UNIX)
		t->path = path;
	else if (rest && b[0] & 0x80)
		t->host = host;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t tlen = nul ? (size_t)(nul - data) : size;
	size_t rlen = nul ? size - tlen - 1 : 0;
	char *text = malloc(tlen + 1), *host = malloc(rlen + 1),
	     *path = malloc(rlen + 1);
	struct rs_match m;
	struct rs_target t;
	const char *why = NULL;

	if (!text || !host || !path)
		abort();
	memcpy(text, data, tlen);
	text[tlen] = '\0';
	memset(&m, 0, sizeof(m));
	if (rs_match_parse(&m, text, &why) == 0) {
		derive(&t, nul ? nul + 1 : data, rlen, host, path);
		(void)rs_match_test(&m, &t);
		rs_match_free(&m);
	} else if (!why) {
		abort();
	}
	free(text);
	free(host);
	free(path);
	return 0;
}
