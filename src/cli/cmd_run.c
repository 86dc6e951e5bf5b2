/* SPDX-License-Identifier: MIT */
/*
 * cmd_run.c - `resolute run [--policy FILE] [--deadline DURATION]
 * [--log LEVEL] -- COMMAND [ARG...]`: set up the environment and exec.
 *
 * Everything the interposer needs travels in the environment, so it is
 * inherited by COMMAND's children too.  An inherited RESOLUTE_DEADLINE is
 * never extended: a parent's deadline bounds its whole process tree.
 */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "duration.h"
#include "log.h"
#include "policy_source.h"
#include "policy_yaml.h"


struct run_opts {
	const char *policy;
	const char *deadline;
	const char *log;
	char **cmd;
};

/* Parses the options up to COMMAND; returns 0 or an exit status. */
static int run_args(int argc, char **argv, struct run_opts *o)
{
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *v;

		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if ((v = rs_cli_opt_value(argc, argv, &i, "--policy")))
			o->policy = v;
		else if ((v = rs_cli_opt_value(argc, argv, &i, "--deadline")))
			o->deadline = v;
		else if ((v = rs_cli_opt_value(argc, argv, &i, "--log")))
			o->log = v;
		else
			return rs_cli_usage_error("run: unknown option or "
			    "missing value: '%s'", argv[i]);
	}
	if (i >= argc)
		return rs_cli_usage_error("run: no COMMAND given");
	if (o->log && rs_log_level_parse(o->log) < 0)
		return rs_cli_usage_error("run: --log must be error, warn, "
		    "info or debug, not '%s'", o->log);
	o->cmd = argv + i;
	return 0;
}

/* Whether the LD_PRELOAD list (space- or colon-separated) holds lib. */
static bool preload_has(const char *list, const char *lib)
{
	size_t n = strlen(lib);

	for (const char *p = list; *p; ) {
		size_t len = strcspn(p, " :");

		if (len == n && strncmp(p, lib, n) == 0)
			return true;
		p += len;
		p += strspn(p, " :");
	}
	return false;
}

/* Puts the interposer first in LD_PRELOAD, once. */
static int set_preload(void)
{
	char rel[PATH_MAX], lib[PATH_MAX], *val;
	const char *old = getenv("LD_PRELOAD");

	if (rs_cli_lib_path(rel, sizeof(rel)) < 0 ||
	    rs_cli_abs_path(rel, lib, sizeof(lib)) < 0)
		return rs_cli_usage_error("run: library path too long");
	if (strpbrk(lib, " :")) {
		fprintf(stderr, "resolute: %s: LD_PRELOAD cannot hold a path "
		    "with a space or colon\n", lib);
		return RS_EXIT_FAIL;
	}
	if (access(lib, R_OK) != 0)
		rs_cli_warn("%s: %s; set RESOLUTE_LIB", lib, strerror(errno));
	if (old && preload_has(old, lib))
		return 0;
	if (!old || !*old)
		return setenv("LD_PRELOAD", lib, 1) ? RS_EXIT_FAIL : 0;
	if (asprintf(&val, "%s:%s", lib, old) < 0)
		return RS_EXIT_FAIL;
	setenv("LD_PRELOAD", val, 1);
	free(val);
	return 0;
}

/*
 * Validates the policy the library will read and exports its absolute path
 * (COMMAND may change directory).  An invalid policy makes the library pass
 * everything through, so COMMAND still runs unless RESOLUTE_STRICT=1.
 */
static int set_policy(const char *opt)
{
	const char *path = rs_policy_choose(opt, false);
	const char *strict = getenv("RESOLUTE_STRICT");
	char abs[PATH_MAX];
	struct rs_policy *p;

	if (!path)
		return 0;
	if (rs_cli_abs_path(path, abs, sizeof(abs)) < 0)
		return rs_cli_usage_error("run: policy path too long");
	/* The library finds the system file by itself; a named one is
	   exported, absolute, as it wins over the environment's. */
	if ((opt || !rs_policy_is_system(path)) &&
	    setenv("RESOLUTE_POLICY", abs, 1) != 0)
		return RS_EXIT_FAIL;
	if (rs_cli_load_policy(abs, &p) == 0) {
		rs_policy_free(p);
		return 0;
	}
	if (strict && strcmp(strict, "1") == 0) {
		fprintf(stderr, "resolute: %s is invalid and RESOLUTE_STRICT=1: "
		    "not running the command\n", abs);
		return RS_EXIT_CONFIG;
	}
	rs_cli_warn("%s is invalid: the library will pass every call "
	    "through unchanged", abs);
	return 0;
}

/* Sets RESOLUTE_DEADLINE to now + d, unless an earlier one is inherited. */
static int set_deadline(const char *d)
{
	const char *old = getenv("RESOLUTE_DEADLINE");
	char buf[32], why[160], *end;
	uint64_t ms;
	long long want, have;

	if (!d)
		return 0;
	/* The policy's own grammar (duration.h): the same texts work in
	   both places; `off` is no deadline, so it is refused here. */
	if (strcmp(d, "off") == 0)
		return rs_cli_usage_error("run: --deadline cannot be off (leave "
		    "the option out for none)");
	if (rs_duration_parse(d, &ms, why, sizeof(why)) < 0)
		return rs_cli_usage_error("run: invalid --deadline '%s': %s",
		    d, why);
	if (ms >= RS_OFF)
		return rs_cli_usage_error("run: --deadline '%s' is too long",
		    d);
	want = (long long)rs_clock_epoch_ms() + ms;
	if (old && *old) {
		/* Valid as the library reads it (runtime.c): epoch ms above
		   0; anything else it would ignore, so it is replaced. */
		errno = 0;
		have = strtoll(old, &end, 10);
		bool valid = !errno && !*end && have > 0;

		if (valid && have <= want)
			return 0;
		if (!valid)
			rs_cli_warn("ignoring invalid RESOLUTE_DEADLINE='%s'",
			    old);
	}
	snprintf(buf, sizeof(buf), "%lld", want);
	return setenv("RESOLUTE_DEADLINE", buf, 1) ? RS_EXIT_FAIL : 0;
}

/* Execs COMMAND; returns only on failure, with the shell's exit status. */
static int exec_command(char **cmd)
{
	char path[PATH_MAX];
	int rc = rs_cli_find_command(cmd[0], path, sizeof(path));

	if (rc == -ENOENT) {
		fprintf(stderr, "resolute: %s: command not found\n", cmd[0]);
		return RS_EXIT_NOTFOUND;
	}
	if (rc == 0)
		rs_cli_warn_unpreloadable(path, cmd[0]);
	fflush(stdout);
	execvp(cmd[0], cmd);
	rc = errno;
	fprintf(stderr, "resolute: %s: %s\n", cmd[0], strerror(rc));
	return rc == ENOENT ? RS_EXIT_NOTFOUND : RS_EXIT_NOEXEC;
}

int rs_cmd_run(int argc, char **argv)
{
	struct run_opts o = { 0 };
	int rc = run_args(argc, argv, &o);

	if (rc)
		return rc;
	if ((rc = set_deadline(o.deadline)) || (rc = set_policy(o.policy)) ||
	    (rc = set_preload()))
		return rc;
	if (o.log && setenv("RESOLUTE_LOG", o.log, 1) != 0)
		return RS_EXIT_FAIL;
	return exec_command(o.cmd);
}
