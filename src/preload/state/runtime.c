/* SPDX-License-Identifier: MIT */
/*
 * runtime.c - what the library decided at start-up: whether it is active,
 * the policy, the process deadline.
 *
 * Nothing is read until the first call that needs it (a connect()), under
 * the re-entrancy guard: the policy loader allocates and reads files, and
 * none of that must come back through our wrappers.  The result is
 * published once with a release store and read lock-free afterwards.
 */
#include "runtime.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "clock.h"
#include "guard.h"
#include "hot.h"
#include "log.h"
#include "policy_source.h"
#include "policy_yaml.h"
#include "startenv.h"
#include "learn.h"
#include "stats.h"

#define EX_CONFIG 78

static struct rs_runtime runtime;
static int ready;			/* atomic: runtime is complete */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

unsigned rs_runtime_rare;

const struct rs_runtime *rs_runtime_peek(void)
{
	return __atomic_load_n(&ready, __ATOMIC_ACQUIRE) ? &runtime : NULL;
}

/* Logs every diagnostic, once, at error level. */
static void report(const struct rs_diags *d)
{
	char line[512];

	for (size_t i = 0; i < d->n; i++) {
		rs_diag_format(&d->v[i], line, sizeof(line));
		rs_log(RS_LOG_ERROR, NULL, "%s", line);
	}
}

/*
 * Loads the policy rs_policy_choose() names, from the start-up
 * environment.  Returns it, or NULL when it is invalid or unreadable
 * (after logging why).
 */
static struct rs_policy *load_policy(bool secure)
{
	/* RESOLUTE_POLICY as the process started with it, passed as the
	   choice to make; the current environment (maybe cleared) is not
	   asked again, hence "secure" for rs_policy_choose(). */
	const char *env = secure ? NULL : rs_startenv_get("RESOLUTE_POLICY");
	const char *path = rs_policy_choose(env && *env ? env : NULL, true);
	struct rs_diags d = { 0 };
	struct rs_policy *p = NULL;
	int err;

	if (path)
		err = rs_policy_load_file(path, &p, &d);
	else
		err = rs_policy_load_default(&p, &d);
	if (err) {
		report(&d);
		rs_log(RS_LOG_ERROR, NULL, "policy %s unusable; %s",
		    path ? path : "<built-in>",
		    rs_startenv_is("RESOLUTE_STRICT", "1") ?
			"exiting (RESOLUTE_STRICT=1)" :
			"passing every call through unchanged");
		p = NULL;
	}
	rs_diags_free(&d);
	return p;
}

/*
 * RESOLUTE_DEADLINE: absolute, Unix epoch milliseconds; *epoch_ms keeps
 * the value as given, so that a deadline header carries it exactly.
 */
static int64_t read_deadline(int64_t *epoch_ms)
{
	const char *v = rs_startenv_get("RESOLUTE_DEADLINE");
	char *end;

	if (!v || !*v)
		return RS_NEVER;
	errno = 0;
	long long ms = strtoll(v, &end, 10);

	if (errno || *end || ms <= 0) {
		rs_log(RS_LOG_WARN, NULL,
		    "RESOLUTE_DEADLINE=%s is not epoch milliseconds; ignored",
		    v);
		return RS_NEVER;
	}
	*epoch_ms = ms;
	return rs_clock_epoch_to_mono_ms(ms);
}

static void init_locked(void)
{
	int save = errno;

	runtime.secure = getauxval(AT_SECURE) != 0;
	rs_log_configure_from(runtime.secure, rs_startenv_get);
	runtime.deadline_ms = read_deadline(&runtime.deadline_epoch_ms);
	if (runtime.deadline_ms != RS_NEVER)
		rs_runtime_rare_set(RS_RARE_DEADLINE);
	if (!rs_startenv_is("RESOLUTE_DISABLE", "1")) {
		runtime.policy = load_policy(runtime.secure);
		if (!runtime.policy && rs_startenv_is("RESOLUTE_STRICT", "1")) {
			rs_log_flush();	/* why it exits */
			_exit(EX_CONFIG);
		}
		runtime.active = runtime.policy != NULL;
		if (runtime.active) {
			rs_stats_init(runtime.policy);
			rs_learn_init(runtime.policy);
		}
	}
	errno = save;
}

RS_HOT const struct rs_runtime *rs_runtime_get(void)
{
	const struct rs_runtime *r = rs_runtime_peek();

	if (r)
		return r;
	rs_guard_enter();
	pthread_mutex_lock(&init_lock);
	/* Once per process, one thread starts the library; its log lines
	   wait until the lock is free (a write may block: log.h). */
	bool mine = !__atomic_load_n(&ready, __ATOMIC_ACQUIRE);

	if (mine) {
		rs_log_hold();
		init_locked();
		__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&init_lock);
	if (mine)
		rs_log_flush();
	rs_guard_leave();
	return &runtime;
}

void rs_runtime_fork_prepare(void)
{
	pthread_mutex_lock(&init_lock);
}

void rs_runtime_fork_release(void)
{
	pthread_mutex_unlock(&init_lock);
}
