/* SPDX-License-Identifier: MIT */
/*
 * cli_common.c - helpers shared by the subcommands: messages, policy
 * loading with diagnostics, and finding the interposer.
 *
 * Single-threaded use only (the tool has no threads).
 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "default_policy.h"
#include "policy_yaml.h"

#ifndef RS_LIBDIR
#define RS_LIBDIR "/usr/local/lib/resolute"
#endif

int rs_cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("resolute: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'resolute help' for more information.\n", stderr);
	return RS_EXIT_USAGE;
}

const char *rs_cli_opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] == '\0' && *i + 1 < argc)
		return argv[++*i];
	return NULL;
}

void rs_cli_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("resolute: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Prints every diagnostic in d on stderr, in the order found. */
static void print_diags(const struct rs_diags *d)
{
	char line[1024];

	for (size_t i = 0; i < d->n; i++) {
		rs_diag_format(&d->v[i], line, sizeof(line));
		fprintf(stderr, "%s\n", line);
	}
}

int rs_cli_load_policy(const char *path, struct rs_policy **out)
{
	struct rs_diags d = { 0 };
	int rc = rs_policy_load_file(path, out, &d);

	print_diags(&d);
	if (rc < 0 && d.n == 0)
		fprintf(stderr, "%s: error: %s\n", path, strerror(-rc));
	rs_diags_free(&d);
	return rc < 0 ? -1 : 0;
}

int rs_cli_load_builtin(struct rs_policy **out)
{
	struct rs_diags d = { 0 };
	int rc = rs_policy_load_buffer("<built-in>", rs_default_policy,
	    (size_t)rs_default_policy_len, out, &d);

	print_diags(&d);
	rs_diags_free(&d);
	return rc < 0 ? -1 : 0;
}

int rs_cli_abs_path(const char *path, char *buf, size_t len)
{
	char real[PATH_MAX], cwd[PATH_MAX];
	int n;

	/* A file that does not exist yet keeps its name, made absolute. */
	if (realpath(path, real))
		n = snprintf(buf, len, "%s", real);
	else if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		n = snprintf(buf, len, "%s", path);
	else
		n = snprintf(buf, len, "%s/%s", cwd, path);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Stores in buf the libresolute.so beside /proc/self/exe; 0 if it exists. */
static int lib_beside_self(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;
	int m;

	if (n <= 0)
		return -ENOENT;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	m = snprintf(buf, len, "%s/libresolute.so", exe);
	if (m < 0 || (size_t)m >= len)
		return -ENAMETOOLONG;
	return access(buf, F_OK) == 0 ? 0 : -ENOENT;
}

int rs_cli_lib_path(char *buf, size_t len)
{
	const char *env = getenv("RESOLUTE_LIB");
	int n;

	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else if (lib_beside_self(buf, len) == 0)
		return 0;
	else
		n = snprintf(buf, len, "%s/libresolute.so", RS_LIBDIR);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

void rs_cli_setting_line(const struct rs_rule *r, uint64_t key,
    const char *name, const char *value)
{
	printf("  %-28s%-12s%s\n", name, value,
	    r && (r->set & key) ? "(rule)" : "(defaults)");
}

void rs_cli_status_list(bool (*has)(const void *set, unsigned status),
    const void *set, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned c = RS_HTTP_STATUS_MIN; c <= RS_HTTP_STATUS_MAX; c++) {
		if (!has(set, c))
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%u",
		    used ? ", " : "", c);
		if (used >= len)
			return;
	}
	if (!used)
		snprintf(buf, len, "none");
}
