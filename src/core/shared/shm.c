/* SPDX-License-Identifier: MIT */
/*
 * shm.c - budget tables in POSIX shared memory (see shm.h for the layout,
 * naming and trust rules).
 *
 * Files are opened with raw system calls (sysio.h) rather than shm_open(),
 * which is the same openat() under /dev/shm on Linux, so that neither an
 * open nor a close can reach an interposed wrapper and no librt is needed.
 * Thread-safe; nothing here blocks beyond a tmpfs open, fstat and mmap.
 */
#include "shm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "sysio.h"

uint64_t rs_shm_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

int rs_shm_path(const char *policy, uid_t uid, char *path, size_t plen,
    char *real, size_t rlen)
{
	char buf[PATH_MAX];
	const char *r = policy;
	int n, save = errno;

	if (strcmp(policy, "<built-in>") != 0 && realpath(policy, buf))
		r = buf;
	errno = save;
	if (strlen(r) >= rlen || strlen(r) >= RS_SHM_POLICY_MAX)
		return -ENAMETOOLONG;
	strcpy(real, r);
	n = snprintf(path, plen, "%s/%s%u-%016llx-v%d", RS_SHM_DIR,
	    RS_SHM_PREFIX, (unsigned)uid,
	    (unsigned long long)rs_shm_hash(RS_FNV_INIT, r, strlen(r)),
	    RS_SHM_VERSION);
	return n < 0 || (size_t)n >= plen ? -ENAMETOOLONG : 0;
}

/*
 * Opens the segment file, creating it when asked.  O_EXCL tells the
 * creator apart, which then fixes the mode the umask may have narrowed;
 * O_NOFOLLOW refuses a symbolic link planted in the world-writable
 * directory.  Returns the descriptor or -errno.
 */
static int open_file(const char *path, bool create)
{
	int fd;

	if (!create)
		return rs_sys_open(path, O_RDONLY | O_NOFOLLOW, 0);
	fd = rs_sys_open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		if (fchmod(fd, 0600) < 0) {
			int err = -errno;

			rs_sys_close(fd);
			return err;
		}
		return fd;
	}
	if (fd != -EEXIST)
		return fd;
	return rs_sys_open(path, O_RDWR | O_NOFOLLOW, 0);
}

/*
 * Trusts the file only when it is ours alone.  A file of size 0 is one
 * whose creator has not sized it yet (or died before it could); sizing it
 * again is harmless, since ftruncate() to the same size keeps the data.
 */
static int check_owner(int fd, struct stat *st)
{
	if (fstat(fd, st) < 0)
		return -errno;
	if (!S_ISREG(st->st_mode))
		return -EPROTO;
	if (st->st_uid != geteuid())
		return -EPERM;
	if ((st->st_mode & 07777) != 0600)
		return -EACCES;
	return 0;
}

static int check_file(int fd, bool create)
{
	struct stat st;
	int err = check_owner(fd, &st);

	if (err)
		return err;
	if (st.st_size == 0 && create &&
	    ftruncate(fd, (off_t)sizeof(struct rs_shm_table)) < 0)
		return -errno;
	if (st.st_size != 0 && st.st_size != sizeof(struct rs_shm_table))
		return -EPROTO;
	if (st.st_size == 0 && !create)
		return -EPROTO;
	return 0;
}

/*
 * Every opener that finds no magic writes the same header, byte by byte
 * with atomic stores, and then tries to publish it with a CAS on the
 * magic; whoever wins, the header is the same, and an opener that dies
 * half-way leaves no magic, so the next one simply writes it again.
 */
static void init_header(struct rs_shm_table *t, const char *real)
{
	uint64_t zero = 0;
	size_t n = strlen(real);

	__atomic_store_n(&t->version, RS_SHM_VERSION, __ATOMIC_RELAXED);
	__atomic_store_n(&t->nslots, RS_SHM_SLOTS, __ATOMIC_RELAXED);
	__atomic_store_n(&t->size, sizeof(*t), __ATOMIC_RELAXED);
	__atomic_store_n(&t->nmetrics, RS_SHM_METRICS, __ATOMIC_RELAXED);
	__atomic_store_n(&t->ncounters, RS_SHM_COUNTERS, __ATOMIC_RELAXED);
	__atomic_store_n(&t->nlearn, RS_SHM_LEARN, __ATOMIC_RELAXED);
	__atomic_store_n(&t->nbuckets, RS_LAT_BUCKETS, __ATOMIC_RELAXED);
	__atomic_store_n(&t->nbreakers, RS_BREAKER_SLOTS, __ATOMIC_RELAXED);
	for (size_t i = 0; i <= n; i++)
		__atomic_store_n(&t->policy[i], real[i], __ATOMIC_RELAXED);
	__atomic_compare_exchange_n(&t->magic, &zero, RS_SHM_MAGIC, false,
	    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

static int check_header(struct rs_shm_table *t, const char *real,
    bool create)
{
	if (create && __atomic_load_n(&t->magic, __ATOMIC_ACQUIRE) == 0)
		init_header(t, real);
	if (__atomic_load_n(&t->magic, __ATOMIC_ACQUIRE) != RS_SHM_MAGIC ||
	    t->version != RS_SHM_VERSION || t->nslots != RS_SHM_SLOTS ||
	    t->size != sizeof(*t) || t->nmetrics != RS_SHM_METRICS ||
	    t->ncounters != RS_SHM_COUNTERS || t->nlearn != RS_SHM_LEARN ||
	    t->nbuckets != RS_LAT_BUCKETS || t->nbreakers != RS_BREAKER_SLOTS)
		return -EPROTO;
	if (real && strncmp(t->policy, real, RS_SHM_POLICY_MAX) != 0)
		return -EPROTO;
	return 0;
}

/* Maps the checked file fd; returns the mapping or NULL (errno set). */
static struct rs_shm_table *map_file(int fd, bool create)
{
	void *m = mmap(NULL, sizeof(struct rs_shm_table),
	    create ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);

	return m == MAP_FAILED ? NULL : m;
}

int rs_shm_attach(const char *path, const char *real, bool create,
    struct rs_shm_table **out)
{
	int save = errno, fd = open_file(path, create), err;
	struct rs_shm_table *t = NULL;

	if (fd < 0) {
		errno = save;
		return fd;
	}
	err = check_file(fd, create);
	if (!err && !(t = map_file(fd, create)))
		err = -errno;
	rs_sys_close(fd);
	if (!err)
		err = check_header(t, real, create);
	if (err && t)
		munmap(t, sizeof(*t));
	errno = save;
	if (!err)
		*out = t;
	return err;
}

void rs_shm_detach(struct rs_shm_table *t)
{
	int save = errno;

	if (t)
		munmap(t, sizeof(*t));
	errno = save;
}

/*
 * pread() is not among the wrapped names and reads a plain file on tmpfs,
 * so it cannot block or re-enter the library.
 */
int rs_shm_peek(const char *path, struct rs_shm_head *h)
{
	int save = errno, fd = open_file(path, false), err;
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return fd;
	err = check_owner(fd, &st);
	if (!err) {
		n = pread(fd, h, sizeof(*h), 0);
		if (n < 0)
			err = -errno;
		else if ((size_t)n < sizeof(*h) || h->magic != RS_SHM_MAGIC)
			err = -EPROTO;
	}
	rs_sys_close(fd);
	h->policy[RS_SHM_POLICY_MAX - 1] = '\0';
	errno = save;
	return err;
}

/*
 * A rule's key covers what its accounting depends on: which rule (its
 * match text; the defaults hash a text no rule can have) and the budget
 * parameters, so that processes with different versions of a rule never
 * mix counts made under different windows.  0 means a free slot.
 */
static uint64_t slot_key(const char *text, const struct rs_retry_budget *b)
{
	uint64_t h = rs_shm_hash(RS_FNV_INIT, text, strlen(text) + 1);

	h = rs_shm_hash(h, &b->ratio, sizeof(b->ratio));
	h = rs_shm_hash(h, &b->min_per_second, sizeof(b->min_per_second));
	h = rs_shm_hash(h, &b->window_ms, sizeof(b->window_ms));
	return h ? h : 1;
}

/*
 * Finds the entry of key in an open-addressing array of n entries of
 * `size` bytes, each beginning with its 64-bit key, by linear probing;
 * claims the first free one when `claim` (*fresh then says so).  Keys are
 * never removed, so the first free entry on the probe path ends a search.
 * Returns NULL when the key is absent (or the array full).
 */
static void *probe(void *base, size_t n, size_t size, uint64_t key,
    bool claim, bool *fresh)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t *e = (uint64_t *)((char *)base + (key + i) % n * size);
		uint64_t k = __atomic_load_n(e, __ATOMIC_ACQUIRE);

		if (k == 0 && claim && __atomic_compare_exchange_n(e, &k, key,
		    false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			*fresh = true;
			return e;
		}
		if (k == key)
			return e;
		if (k == 0)
			return NULL;
	}
	return NULL;
}

/* Fills a freshly claimed slot, then marks it ready for readers. */
static void fill_slot(struct rs_shm_slot *s, const char *text, unsigned line,
    const struct rs_retry_budget *b)
{
	s->line = line;
	s->ratio = b->ratio;
	s->min_per_second = b->min_per_second;
	s->window_ms = b->window_ms;
	snprintf(s->rule, sizeof(s->rule), "%s", text);
	__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
}

struct rs_shm_slot *rs_shm_slot(struct rs_shm_table *t,
    const struct rs_rule *rule, const struct rs_retry_budget *b)
{
	const char *text = rule ? rule->match.text : "\001defaults";
	bool fresh = false;
	struct rs_shm_slot *s = probe(t->slots, RS_SHM_SLOTS, sizeof(*s),
	    slot_key(text, b), true, &fresh);

	if (s && fresh)
		fill_slot(s, rule ? text : "defaults", rule ? rule->line : 0,
		    b);
	return s;
}

const struct rs_shm_slot *rs_shm_slot_find(const struct rs_shm_table *t,
    const struct rs_rule *rule, const struct rs_retry_budget *b)
{
	bool fresh;

	return probe((void *)t->slots, RS_SHM_SLOTS, sizeof(t->slots[0]),
	    slot_key(rule ? rule->match.text : "\001defaults", b), false,
	    &fresh);
}

/*
 * Labels must stay distinct: a match text that does not fit keeps its
 * start and ends in "~" and its key, which no other rule shares; so does
 * a host rule that matches the host name "defaults", which would
 * otherwise share the label of the defaults.
 */
static void fill_metric(struct rs_shm_metric *m, const char *text,
    bool is_rule, unsigned line)
{
	size_t n = strlen(text);

	if (n < sizeof(m->rule) && !(is_rule && strcmp(text, "defaults") == 0))
		memcpy(m->rule, text, n + 1);
	else
		snprintf(m->rule, sizeof(m->rule), "%.*s~%016llx",
		    (int)sizeof(m->rule) - 18, text,
		    (unsigned long long)m->key);
	m->line = line;
	__atomic_store_n(&m->ready, 1, __ATOMIC_RELEASE);
}

uint64_t rs_shm_rule_key(const struct rs_rule *rule)
{
	const char *text = rule ? rule->match.text : "\001defaults";
	uint64_t key = rs_shm_hash(RS_FNV_INIT, text, strlen(text) + 1);

	return key ? key : 1;
}

const struct rs_shm_metric *rs_shm_metric_find(const struct rs_shm_table *t,
    uint64_t key)
{
	bool fresh;

	return probe((void *)t->metrics, RS_SHM_METRICS, sizeof(t->metrics[0]),
	    key, false, &fresh);
}

struct rs_shm_metric *rs_shm_metric(struct rs_shm_table *t,
    const struct rs_rule *rule)
{
	const char *text = rule ? rule->match.text : "\001defaults";
	bool fresh = false;
	struct rs_shm_metric *m = probe(t->metrics, RS_SHM_METRICS,
	    sizeof(*m), rs_shm_rule_key(rule), true, &fresh);

	if (m && fresh)
		fill_metric(m, rule ? text : "defaults", rule != NULL,
		    rule ? rule->line : 0);
	return m;
}

struct rs_shm_learn *rs_shm_learn(struct rs_shm_table *t,
    const struct rs_rule *rule, const struct rs_settings *s, bool claim)
{
	uint32_t half_life_ms = s->auto_timeout.half_life_ms;
	const char *text = rule ? rule->match.text : "\001defaults";
	uint64_t key = rs_shm_hash(RS_FNV_INIT, text, strlen(text) + 1);
	bool fresh = false;
	struct rs_shm_learn *l;

	key = rs_shm_hash(key, &half_life_ms, sizeof(half_life_ms));
	l = probe(t->learn, RS_SHM_LEARN, sizeof(*l), key ? key : 1, claim,
	    &fresh);
	if (l && fresh) {
		l->half_life_ms = half_life_ms;
		l->auto_mask = s->auto_mask;
		l->auto_timeout = s->auto_timeout;
		l->since_ms = rs_clock_epoch_ms();
		snprintf(l->rule, sizeof(l->rule), "%s",
		    rule ? text : "defaults");
		__atomic_store_n(&l->ready, 1, __ATOMIC_RELEASE);
	}
	return l;
}

void rs_shm_slot_budget(const struct rs_shm_slot *s,
    struct rs_retry_budget *b)
{
	b->ratio = s->ratio;
	b->min_per_second = s->min_per_second;
	b->window_ms = s->window_ms;
	b->scope = RS_SCOPE_MACHINE;
}

const char *rs_shm_refusal(int err)
{
	switch (err) {
	case -EPERM:
		return "it belongs to another user";
	case -EACCES:
		return "its mode is not 0600";
	case -EPROTO:
		return "it is not a segment of this layout and policy";
	default:
		return strerror(-err);
	}
}
