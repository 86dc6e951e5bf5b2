/* SPDX-License-Identifier: MIT */
/*
 * shm.h - the tables that hold retry budgets and counters: one per process,
 * and one per user and policy file in POSIX shared memory, which holds the
 * budgets of scope: machine and the machine-wide counters (SPEC 11).
 *
 * A segment is the file /dev/shm/resolute-<euid>-<hash>-v<layout> (what
 * shm_open(3) opens on Linux), where <hash> is the 64-bit FNV-1a of the
 * realpath of the policy file (or of "<built-in>"), in 16 hex digits, and
 * <layout> is RS_SHM_VERSION.  Layout 1 (budgets only) had no suffix; its
 * files are never opened by this code, so processes started before an
 * upgrade keep theirs and new ones make a new file: two layouts never share
 * (or misread) one file.  Every layout begins with the same header fields
 * (magic, version, nslots, size, policy), so a reader can tell which layout
 * a file has before it trusts anything else in it.  The path and not the
 * content is hashed so that every process started with one policy file
 * shares, and an edit of the file keeps the budgets of unchanged rules:
 * each rule's slot is keyed by its match text and budget settings, so an
 * edited rule simply gets a new slot.
 *
 * A segment is created 0600 with O_EXCL and O_NOFOLLOW, and used only when
 * it is a regular file owned by our effective uid with mode exactly 0600,
 * of the expected size, with our magic, layout version and policy path.
 * There is no lock: a header is initialised idempotently (every opener
 * writes the same values, a CAS on the magic publishes them), a slot is
 * claimed by one CAS on its key, and counters are atomic words (budget.h).
 * A process killed at any point therefore never leaves anything held.
 * Slots are never freed; the segment lives until reboot (tmpfs) or until
 * removed by hand.  Thread-safe; errno is left unchanged.
 */
#ifndef RS_SHM_H
#define RS_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "breaker_table.h"
#include "budget_acct.h"
#include "latency.h"
#include "policy.h"

#define RS_SHM_DIR "/dev/shm"
#define RS_SHM_PREFIX "resolute-"
#define RS_SHM_MAGIC 0x3154454744554252ull	/* "RBUDGET1", every layout */
#define RS_SHM_VERSION 4
#define RS_SHM_SLOTS 256
#define RS_SHM_RULE_MAX 64
#define RS_SHM_POLICY_MAX 512
#define RS_SHM_METRICS 256
#define RS_SHM_LABEL_MAX 256
/* Room per rule for counters added later: enum rs_stat only grows at its
   end, so a longer enum keeps this layout. */
#define RS_SHM_COUNTERS 16
/* Rules whose latency is learned (SPEC 13); later ones learn nothing. */
#define RS_SHM_LEARN 64

/* One rule's budget.  Fields other than key and acct are for display. */
struct rs_shm_slot {
	uint64_t key;			/* 0: free; set once by CAS */
	uint32_t ready;			/* 1 once the fields below are set */
	uint32_t line;			/* of the rule; 0: the defaults */
	double ratio;
	uint32_t min_per_second;
	uint32_t window_ms;
	char rule[RS_SHM_RULE_MAX];	/* match text, or "defaults" */
	struct rs_budget_acct acct;
};

/*
 * One rule's counters (enum rs_stat), keyed by its match text alone, so
 * that a rule keeps one series whatever its budget or line.  A match text
 * too long for the label keeps its start and ends with its key in hex.
 */
struct rs_shm_metric {
	uint64_t key;			/* 0: free; set once by CAS */
	uint32_t ready;			/* 1 once rule is set */
	uint32_t line;			/* of the rule when claimed */
	char rule[RS_SHM_LABEL_MAX];	/* match text, or "defaults" */
	uint64_t count[RS_SHM_COUNTERS];
};

/* What is learned of a rule's latency (learn.h), kind by kind. */
enum rs_learn_kind {
	RS_LEARN_CONNECT,	/* connect attempts that connected */
	RS_LEARN_READ,		/* waits for data, from the last activity */
	RS_LEARN_WRITE,		/* writes that had to wait */
	RS_LEARN_KINDS
};

/*
 * One rule's learned latency, keyed by its match text and half-life (a
 * changed half-life starts afresh: its epochs would not line up).
 * since_ms is the wall-clock time (Unix ms) at which it was claimed.
 */
struct rs_shm_learn {
	uint64_t key;			/* 0: free; set once by CAS */
	uint32_t ready;			/* 1 once the fields below are set */
	uint32_t half_life_ms;
	int64_t since_ms;
	uint32_t auto_mask;		/* as the claimer's policy had them, */
	struct rs_auto_timeout auto_timeout;	/* for `resolute stats` */
	char rule[RS_SHM_LABEL_MAX];
	struct rs_lat hist[RS_LEARN_KINDS];
};

struct rs_shm_table {
	uint64_t magic;			/* written last, see shm.c */
	uint32_t version;
	uint32_t nslots;
	uint64_t size;
	char policy[RS_SHM_POLICY_MAX];	/* realpath or "<built-in>" */
	/* Layout 1 ended with the budget slots here. */
	uint32_t nmetrics;
	uint32_t ncounters;
	struct rs_shm_slot slots[RS_SHM_SLOTS];
	struct rs_shm_metric metrics[RS_SHM_METRICS];
	/* Layout 2 ended here. */
	uint32_t nlearn;
	uint32_t nbuckets;
	struct rs_shm_learn learn[RS_SHM_LEARN];
	/* Layout 3 ended here; layout 4 adds the breakers (SPEC 12). */
	uint32_t nbreakers;
	uint32_t breaker_pad;
	struct rs_breaker_table breakers;
};

/* The header every layout begins with, as rs_shm_peek() reads it. */
struct rs_shm_head {
	uint64_t magic;
	uint32_t version;
	uint32_t nslots;
	uint64_t size;
	char policy[RS_SHM_POLICY_MAX];
};

/*
 * Stores in path the segment file for a policy path (realpath'd when it
 * exists) and uid, and the resolved policy path in real.  Returns 0 or
 * -ENAMETOOLONG.
 */
int rs_shm_path(const char *policy, uid_t uid, char *path, size_t plen,
    char *real, size_t rlen);

/*
 * Maps the segment file at path for the policy `real` (NULL: any),
 * creating it when `create` (else read-only, for `resolute stats`).
 * Returns 0 with *out set, or -errno: -EPERM not owned by us, -EACCES mode
 * not 0600, -EPROTO not a segment of this layout or of another policy, or
 * what open failed with.  No descriptor stays open.
 */
int rs_shm_attach(const char *path, const char *real, bool create,
    struct rs_shm_table **out);

void rs_shm_detach(struct rs_shm_table *t);

/*
 * Reads the common header of the segment file at path, of any layout,
 * after the same owner and mode checks, without mapping it; h->policy is
 * NUL-terminated.  Returns 0, -EPROTO when the file is too short or has no
 * magic, or the errors of rs_shm_attach().
 */
int rs_shm_peek(const char *path, struct rs_shm_head *h);

/* Returns why rs_shm_attach() refused a segment, for messages. */
const char *rs_shm_refusal(int err);

/*
 * Returns the slot of one rule (NULL: the defaults) with budget b in t,
 * claiming a free one on first use; NULL when all slots are taken.
 */
struct rs_shm_slot *rs_shm_slot(struct rs_shm_table *t,
    const struct rs_rule *rule, const struct rs_retry_budget *b);

/* Returns that slot if some process has claimed it, else NULL; never
   writes, so that it works on a read-only mapping. */
const struct rs_shm_slot *rs_shm_slot_find(const struct rs_shm_table *t,
    const struct rs_rule *rule, const struct rs_retry_budget *b);

/*
 * Returns the counters of one rule (NULL: the defaults) in t, claiming a
 * free slot on first use; NULL when all are taken.
 */
struct rs_shm_metric *rs_shm_metric(struct rs_shm_table *t,
    const struct rs_rule *rule);

/* Returns the key a rule's counters (and breakers) are kept under. */
uint64_t rs_shm_rule_key(const struct rs_rule *rule);

/* Returns the counters kept under key, or NULL; never writes. */
const struct rs_shm_metric *rs_shm_metric_find(const struct rs_shm_table *t,
    uint64_t key);

/*
 * Returns the learned latency of one rule (NULL: the defaults) with
 * settings s (its half-life is part of the key) in t, claiming a free entry on first use when `claim` (t must
 * then be writable); NULL when absent or all are taken.
 */
struct rs_shm_learn *rs_shm_learn(struct rs_shm_table *t,
    const struct rs_rule *rule, const struct rs_settings *s, bool claim);

/* Returns b's parameters as stored in a slot, for the accounting. */
void rs_shm_slot_budget(const struct rs_shm_slot *s,
    struct rs_retry_budget *b);

/* 64-bit FNV-1a of n bytes, continuing from h (start with RS_FNV_INIT). */
#define RS_FNV_INIT 0xcbf29ce484222325ull
uint64_t rs_shm_hash(uint64_t h, const void *p, size_t n);

#endif /* RS_SHM_H */
