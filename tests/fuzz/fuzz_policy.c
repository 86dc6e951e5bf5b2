/* SPDX-License-Identifier: MIT */
/*
 * fuzz_policy.c - libFuzzer target for the policy loader.
 *
 * Every byte string, however hostile (binary garbage, deep nesting, huge
 * numbers, aliases), must come back as a policy or as diagnostics: no
 * crash, no leak, no read past the buffer.  A loaded policy is also
 * queried once, so that the rules it built are exercised too.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "policy.h"
#include "policy_yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Looks up one fixed IPv4 target, walking every rule of the policy. */
static void query(const struct rs_policy *p)
{
	struct rs_target t = { .family = AF_INET, .port = 5432,
		.host = "db.internal" };
	const struct rs_rule *rule;

	memcpy(t.addr, "\x0a\x00\x00\x05", 4);
	(void)rs_policy_lookup(p, &t, &rule);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rs_diags d = { 0 };
	struct rs_policy *p = NULL;
	char line[512];

	if (rs_policy_load_buffer("fuzz.yaml", (const char *)data, size, &p,
		&d) == 0) {
		if (!p)
			abort();
		query(p);
		rs_policy_free(p);
	} else if (p || d.n == 0) {
		/* A failure must leave no policy and say why. */
		abort();
	}
	for (size_t i = 0; i < d.n; i++)
		rs_diag_format(&d.v[i], line, sizeof(line));
	rs_diags_free(&d);
	return 0;
}
