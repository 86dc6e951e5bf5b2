/* SPDX-License-Identifier: MIT */
/*
 * cmd_systemd.c - `resolute systemd [--policy FILE] [--install] UNIT`:
 * a drop-in that preloads the interposer into a systemd unit.
 *
 * A drop-in's Environment=LD_PRELOAD= replaces the unit's own, so the
 * unit's value (from `systemctl show`) is appended after ours.  Values set
 * through EnvironmentFile= are not visible there; the man page says so.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef RS_VERSION
#define RS_VERSION "0.0.0"
#endif

struct sd_opts {
	const char *policy;
	bool install;
	char unit[256];
	char lib[PATH_MAX];
	char abs_policy[PATH_MAX];
	char own_preload[4096];	/* the unit's LD_PRELOAD, or "" */
};

/* Unit types systemd knows; a name without one of them is a service. */
static bool has_unit_type(const char *unit)
{
	static const char *const types[] = { ".service", ".socket",
		".device", ".mount", ".automount", ".swap", ".target",
		".path", ".timer", ".slice", ".scope" };
	const char *dot = strrchr(unit, '.');

	for (size_t i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(dot, types[i]) == 0)
			return true;
	return false;
}

static int sd_args(int argc, char **argv, struct sd_opts *o)
{
	const char *unit = NULL;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--install") == 0)
			o->install = true;
		else if (strncmp(argv[i], "--policy=", 9) == 0)
			o->policy = argv[i] + 9;
		else if (strcmp(argv[i], "--policy") == 0 && i + 1 < argc)
			o->policy = argv[++i];
		else if (argv[i][0] == '-')
			return rs_cli_usage_error("systemd: unknown option or "
			    "missing value: '%s'", argv[i]);
		else if (unit)
			return rs_cli_usage_error("systemd: one UNIT only");
		else
			unit = argv[i];
	}
	if (!unit || !*unit || strchr(unit, '/') || strlen(unit) > 200)
		return rs_cli_usage_error("systemd: expected one UNIT name");
	/* Environment= exists in [Service] only: other units cannot use it. */
	if (has_unit_type(unit) && !strstr(unit, ".service"))
		return rs_cli_usage_error("systemd: %s is not a service; "
		    "preload into the service it starts", unit);
	snprintf(o->unit, sizeof(o->unit), "%s%s", unit,
	    has_unit_type(unit) ? "" : ".service");
	return 0;
}

/* Runs `systemctl show -p Environment UNIT`; returns bytes read or -1. */
static ssize_t systemctl_env(const char *unit, char *buf, size_t len)
{
	int fds[2], status;
	ssize_t n = 0, r;
	pid_t pid;

	if (pipe(fds) < 0 || (pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(fds[1], 1);
		dup2(null, 2);
		close(fds[0]);
		execlp("systemctl", "systemctl", "show", "-p", "Environment",
		    unit, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while ((size_t)n < len - 1 &&
	    (r = read(fds[0], buf + n, len - 1 - (size_t)n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += r;
	}
	buf[n] = '\0';
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? n : -1;
}

/*
 * Finds LD_PRELOAD=... among the unit's space-separated assignments
 * (systemctl quotes a value that holds spaces) and copies its value.
 */
static void unit_preload(struct sd_opts *o)
{
	char buf[8192], path[PATH_MAX];
	char *p, *end;
	bool quoted;

	if (rs_cli_find_command("systemctl", path, sizeof(path)) < 0 ||
	    systemctl_env(o->unit, buf, sizeof(buf)) < 0)
		return;
	p = strstr(buf, "LD_PRELOAD=");
	if (!p || (p != buf && !strchr(" \"=", p[-1])))
		return;
	quoted = p != buf && p[-1] == '"';
	p += strlen("LD_PRELOAD=");
	end = p + strcspn(p, quoted ? "\"\n" : " \n");
	snprintf(o->own_preload, sizeof(o->own_preload), "%.*s",
	    (int)(end - p), p);
}

/*
 * Writes Environment=NAME=VALUE, quoted when VALUE holds a blank, quote or
 * backslash; '%' is doubled since systemd expands %-specifiers there.
 */
static void env_line(FILE *f, const char *name, const char *value)
{
	bool quote = strpbrk(value, " \t\"\\'") != NULL;

	fprintf(f, "Environment=%s%s=", quote ? "\"" : "", name);
	for (const char *c = value; *c; c++) {
		if (*c == '%')
			fputc('%', f);
		else if (quote && (*c == '"' || *c == '\\'))
			fputc('\\', f);
		fputc(*c, f);
	}
	fprintf(f, "%s\n", quote ? "\"" : "");
}

static void write_dropin(FILE *f, const struct sd_opts *o)
{
	char preload[sizeof(o->lib) + sizeof(o->own_preload) + 2];

	fprintf(f, "# Preloads resolute into %s; written by `resolute "
	    "systemd` (resolute %s).\n# Apply with: systemctl daemon-reload "
	    "&& systemctl restart %s\n", o->unit, RS_VERSION, o->unit);
	if (o->own_preload[0] && !strstr(o->own_preload, o->lib)) {
		fprintf(f, "# The unit's own LD_PRELOAD (%s) is kept after "
		    "ours: this line replaces it.\n", o->own_preload);
		snprintf(preload, sizeof(preload), "%s:%s", o->lib,
		    o->own_preload);
	} else if (o->own_preload[0]) {
		snprintf(preload, sizeof(preload), "%s", o->own_preload);
	} else {
		snprintf(preload, sizeof(preload), "%s", o->lib);
	}
	fprintf(f, "[Service]\n");
	env_line(f, "LD_PRELOAD", preload);
	if (o->abs_policy[0])
		env_line(f, "RESOLUTE_POLICY", o->abs_policy);
}

/* Creates dir (mode 0755) unless it exists; returns 0 or -1 (printed). */
static int make_dir(const char *dir)
{
	if (mkdir(dir, 0755) == 0 || errno == EEXIST)
		return 0;
	fprintf(stderr, "resolute: %s: %s\n", dir, strerror(errno));
	return -1;
}

/* Writes UNIT.d/resolute.conf atomically (atomic_file.c). */
static int install(const struct sd_opts *o)
{
	const char *base = getenv("SYSTEMD_DIR");
	char dir[PATH_MAX], path[PATH_MAX + 32], tmp[PATH_MAX + 64];
	FILE *f;

	if (!base || !*base)
		base = "/etc/systemd/system";
	snprintf(dir, sizeof(dir), "%s/%s.d", base, o->unit);
	snprintf(path, sizeof(path), "%s/resolute.conf", dir);
	if (make_dir(base) < 0 || make_dir(dir) < 0)
		return RS_EXIT_FAIL;
	if (!(f = rs_cli_temp_open(path, 0644, tmp, sizeof(tmp))))
		return RS_EXIT_FAIL;
	write_dropin(f, o);
	if (rs_cli_temp_commit(f, tmp, path) < 0)
		return RS_EXIT_FAIL;
	printf("%s\nNow run: systemctl daemon-reload && systemctl restart "
	    "%s\n", path, o->unit);
	return RS_EXIT_OK;
}

int rs_cmd_systemd(int argc, char **argv)
{
	static struct sd_opts o;
	char rel[PATH_MAX];
	struct rs_policy *p;
	int rc = sd_args(argc, argv, &o);

	if (rc)
		return rc;
	if (o.policy) {
		if (rs_cli_load_policy(o.policy, &p) < 0)
			return RS_EXIT_FAIL;
		rs_policy_free(p);
		if (rs_cli_abs_path(o.policy, o.abs_policy,
		    sizeof(o.abs_policy)) < 0)
			return rs_cli_usage_error("systemd: path too long");
	}
	if (rs_cli_lib_path(rel, sizeof(rel)) < 0 ||
	    rs_cli_abs_path(rel, o.lib, sizeof(o.lib)) < 0)
		return rs_cli_usage_error("systemd: library path too long");
	unit_preload(&o);
	if (o.install)
		return install(&o);
	write_dropin(stdout, &o);
	return RS_EXIT_OK;
}
