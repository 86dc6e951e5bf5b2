/*
 * epollrec.h - the table of epoll registrations the library looks after
 * (epolltrack.c records them, epollwait.c translates the waits), and the
 * kernel's copy of each.
 *
 * Every function except the lock-free counters must be called with the
 * table lock held (rs_eptrec_lock); the lock is never held across a wait.
 * Results are counts or -errno.
 */
#ifndef RS_EPOLLREC_H
#define RS_EPOLLREC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

/* data.u64 of a registration the library made: tag in the high half. */
#define RS_EPT_TAG 0x52534c5600000000ULL	/* "RSLV" */
#define RS_EPT_TAG_MASK 0xffffffff00000000ULL

/* What the kernel holds for a record. */
enum rs_ept_kernel {
	RS_EPT_PROGRAM,		/* the program's own registration */
	RS_EPT_TAGGED,		/* ours: tagged data, our events */
	RS_EPT_ABSENT,		/* nothing */
};

/* One (epoll fd, fd) registration. */
struct rs_ept_record {
	int epfd, fd;
	uint32_t events;	/* the program's registration */
	epoll_data_t data;
	enum rs_ept_kernel kmode;
	uint32_t kevents;	/* events of the tagged registration */
	bool active;
	bool disarmed;		/* EPOLLONESHOT fired: the program re-arms */
	bool reported;		/* the connect's failure was reported */
	bool expire;		/* read/write deadline reached this round */
	bool seen;		/* the kernel reported it this round */
	struct rs_ept_record *next;	/* hash chain */
	struct rs_ept_record *anext;	/* active list of the instance */
	struct rs_ept_record **aprev;
};

/* One epoll instance that holds records, with its active list. */
struct rs_ept_instance {
	int epfd;
	struct rs_ept_record *active;
	struct rs_ept_instance *next;
};

void rs_eptrec_lock(void);
void rs_eptrec_unlock(void);

/* The number of records, and of active ones (atomic loads, no lock). */
unsigned rs_eptrec_count(void);
unsigned rs_eptrec_active(void);

/* The list of instances (a plain read: may be stale without the lock). */
struct rs_ept_instance *rs_eptrec_instances(void);

/* Returns the record of (epfd, fd), or NULL. */
struct rs_ept_record *rs_eptrec_find(int epfd, int fd);

/* Returns the record of (epfd, fd), creating it; NULL on no memory. */
struct rs_ept_record *rs_eptrec_get(int epfd, int fd);

/* Returns the instance of epfd, or NULL. */
struct rs_ept_instance *rs_eptrec_instance(int epfd);

/* Frees record r (the kernel is not touched). */
void rs_eptrec_drop(struct rs_ept_record *r);

/* Forgets epoll instance epfd and all its records. */
void rs_eptrec_forget_instance(int epfd);

/*
 * Drops record r.  When restore is true its number still names the file
 * the record describes, about to be closed: the program's own
 * registration is put back first.  When false, the number was reused
 * behind our back and the kernel is not touched.
 */
void rs_eptrec_release(struct rs_ept_record *r, bool restore);

/* Releases the records of [first, last] and the instances among them. */
void rs_eptrec_drop_range(unsigned first, unsigned last, bool restore);

/* epoll_ctl through libc, -errno on failure; errno is left alone. */
int rs_eptrec_kctl(int epfd, int op, int fd, uint32_t events,
    epoll_data_t d);

/*
 * Brings r in line with its socket's state, stepping a pending connect
 * (ready: the kernel reported the attempt).  Returns events to report to
 * the program now (a failure), else 0; lowers *next to the time r next
 * needs looking at.
 */
uint32_t rs_eptrec_sync(struct rs_ept_record *r, int ready, int64_t now,
    int64_t *next);

/*
 * The same for a caller with no wait to report to (epoll_ctl, connect()):
 * a failure not yet reported is held for the next wait on r's instance,
 * as Linux reports a dead socket to a registration made or re-armed
 * after it died.
 */
void rs_eptrec_refresh(struct rs_ept_record *r, int64_t now);

/* The poll events a program's epoll registration waits for. */
static inline short rs_eptrec_io_events(uint32_t events)
{
	return (short)(events & (EPOLLIN | EPOLLOUT));
}

#endif /* RS_EPOLLREC_H */
