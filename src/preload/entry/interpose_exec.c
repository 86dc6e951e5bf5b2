/* SPDX-License-Identifier: MIT */
/*
 * interpose_exec.c - the exported exec and posix_spawn names.
 *
 * A child that inherits a socket (one not close-on-exec) must not inherit
 * the library's SO_RCVTIMEO with it: before the new program image is
 * loaded, or a child is spawned, the program's own values are put back
 * (ktimeo.h); the parent re-arms lazily, one system call per connection.
 * The C library's own spawns -- system(), popen() and wordexp()'s command
 * substitution -- reach its internal posix_spawn or fork and exec, which
 * are not ours, so those three are wrapped too and put the values back
 * before they start the child.  Not covered: raw exec system calls, and
 * other spawns made inside a library past its exported names; their
 * children see the library's value on inherited sockets.  The execl family
 * is variadic and is rebuilt here as its execv counterpart, as glibc does.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <wordexp.h>

#include "httphold.h"
#include "ktimeo.h"
#include "real.h"

#define EXPORT __attribute__((visibility("default")))

/* Arguments of an execl call at most; the stack holds them. */
#define MAX_ARGS 4096

/*
 * Before this process becomes another program: what the request layer
 * holds of the program's bytes goes first (httphold.h), or it would be
 * lost with the library's memory.
 */
static void before_exec(void)
{
	rs_ktimeo_before_exec();
	rs_hold_all();
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	before_exec();
	return rs_real_execve(path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
	before_exec();
	return rs_real_execv(path, argv);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	before_exec();
	return rs_real_execvp(file, argv);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	before_exec();
	return rs_real_execvpe(file, argv, envp);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	before_exec();
	return rs_real_fexecve(fd, argv, envp);
}

EXPORT int posix_spawn(pid_t *pid, const char *path,
    const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
    char *const argv[], char *const envp[])
{
	rs_ktimeo_before_exec();
	return rs_real_posix_spawn(pid, path, fa, attr, argv, envp);
}

EXPORT int posix_spawnp(pid_t *pid, const char *file,
    const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
    char *const argv[], char *const envp[])
{
	rs_ktimeo_before_exec();
	return rs_real_posix_spawnp(pid, file, fa, attr, argv, envp);
}

EXPORT int system(const char *cmd)
{
	rs_ktimeo_before_exec();
	return rs_real_system(cmd);
}

EXPORT FILE *popen(const char *cmd, const char *mode)
{
	rs_ktimeo_before_exec();
	return rs_real_popen(cmd, mode);
}

/* A command substitution ($(...), `...`) runs a shell as a child. */
EXPORT int wordexp(const char *words, wordexp_t *p, int flags)
{
	rs_ktimeo_before_exec();
	return rs_real_wordexp(words, p, flags);
}

/* Which execv-style call an execl-style one becomes. */
enum as_v { AS_EXECV, AS_EXECVP, AS_EXECVE };

/*
 * Collects an execl argument list (arg, then ap up to NULL; for execle the
 * environment after it) and makes the execv-style call; E2BIG when there
 * are more than MAX_ARGS.
 */
static int exec_list(enum as_v how, const char *path, const char *arg,
    va_list *ap)
{
	char *argv[MAX_ARGS];

	argv[0] = (char *)arg;
	for (size_t i = 1; argv[i - 1]; i++) {
		if (i == MAX_ARGS) {
			errno = E2BIG;
			return -1;
		}
		argv[i] = va_arg(*ap, char *);
	}
	if (how == AS_EXECVE)
		return execve(path, argv, va_arg(*ap, char *const *));
	return how == AS_EXECVP ? execvp(path, argv) : execv(path, argv);
}

EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	int r = exec_list(AS_EXECV, path, arg, &ap);
	va_end(ap);
	return r;
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	int r = exec_list(AS_EXECVP, file, arg, &ap);
	va_end(ap);
	return r;
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	int r = exec_list(AS_EXECVE, path, arg, &ap);
	va_end(ap);
	return r;
}
