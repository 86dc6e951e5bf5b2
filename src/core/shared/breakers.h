/* SPDX-License-Identifier: MIT */
/*
 * breakers.h - the circuit breakers of a policy (SPEC 12), as the connect
 * engines and the HTTP engine consult them: which table holds a rule's
 * breaker (scope machine: the shared segment, shm.h; process: a table of
 * this process), the log lines and the counters.
 *
 * Nothing here makes a system call once the shared segment is mapped
 * (at the first connect, for the retry budget already), and a rule with
 * `breaker: off` costs one test.  Lock-free (breaker_table.h); safe from
 * any thread and from many processes at once.
 */
#ifndef RS_BREAKERS_H
#define RS_BREAKERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "breaker_table.h"
#include "policy.h"

/* Room for "[ffff:...:ffff]:65535". */
#define RS_BREAKER_ADDR_MAX 56

/*
 * Fills *d from a socket address (IPv4-mapped IPv6 as IPv4) and the
 * rule's key.  Returns false for other families.
 */
bool rs_breakers_dest(struct rs_breaker_dest *d, const struct rs_rule *rule,
    const struct sockaddr *sa, socklen_t len);

/* Writes d's address as IP:PORT or [IPv6]:PORT; returns buf. */
char *rs_breakers_addr_text(int family, const uint8_t *addr, uint16_t port,
    char *buf, size_t len);

/*
 * Asks whether an attempt to sa may start at now_ms.  Returns PASS (no
 * breaker, or closed), PROBE (let through as a half-open probe) or REJECT
 * with the opening errno in *err; a reject is counted (breaker_rejects)
 * and the opening logged, once per process.
 */
enum rs_breaker_verdict rs_breakers_admit(const struct rs_policy *p,
    const struct rs_rule *rule, const struct rs_settings *s,
    const struct sockaddr *sa, socklen_t len, int64_t now_ms, int *err);

/* The same, without counting or logging a reject: a look before the
   attempt is made another way (connect_step.c's kernel path). */
enum rs_breaker_verdict rs_breakers_peek(const struct rs_policy *p,
    const struct rs_rule *rule, const struct rs_settings *s,
    const struct sockaddr *sa, socklen_t len, int64_t now_ms, int *err);

/*
 * Records the outcome of an attempt to sa: err 0 connected (or a status
 * outside on_status), else the errno of a failure that counts.  probe:
 * the attempt was admitted as a probe.  Logs and counts an opening or a
 * closing.  Returns whether sa's breaker is open now (connects to it
 * would be rejected).
 */
bool rs_breakers_record(const struct rs_policy *p, const struct rs_rule *rule,
    const struct rs_settings *s, const struct sockaddr *sa, socklen_t len,
    int err, bool probe, int64_t now_ms);

/* Whether a rule's settings have a breaker: inline, the connect asks. */
static inline bool rs_breakers_on(const struct rs_settings *s)
{
	return __builtin_expect(s->breaker.enabled, 0);
}

/* Empties the table of scope process (tests). */
void rs_breakers_clear_process(void);

#endif /* RS_BREAKERS_H */
