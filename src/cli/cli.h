/* SPDX-License-Identifier: MIT */
/*
 * cli.h - the pieces shared by the subcommands of the resolute command.
 *
 * The tool is single-threaded and short-lived: helpers print their own
 * messages to stderr and return an exit status or -1, so that each
 * subcommand stays a readable sequence of steps.
 */
#ifndef RS_CLI_H
#define RS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "policy.h"

/* Exit statuses shared by every subcommand. */
#define RS_EXIT_OK 0
#define RS_EXIT_FAIL 1
#define RS_EXIT_USAGE 2
#define RS_EXIT_CONFIG 78	/* EX_CONFIG, as RESOLUTE_STRICT uses it */
#define RS_EXIT_NOEXEC 126
#define RS_EXIT_NOTFOUND 127

/* The subcommands; argv[0] is the subcommand's name.  Return exit codes. */
int rs_cmd_check(int argc, char **argv);
int rs_cmd_explain(int argc, char **argv);
int rs_cmd_run(int argc, char **argv);
int rs_cmd_systemd(int argc, char **argv);
int rs_cmd_stats(int argc, char **argv);
int rs_cmd_suggest(int argc, char **argv);

/*
 * Prints explain's lines about the live retry budget of rule r (NULL: the
 * defaults) with settings s under policy p: the formula, the shared
 * segment and its current window, when there is one.
 */
void rs_cli_budget_live(const struct rs_policy *p, const struct rs_rule *r,
    const struct rs_settings *s);

/*
 * explain: prints one setting of rule r (NULL: the defaults) as a line
 * "  NAME VALUE (rule|defaults)", the source by r's bit `key` in r->set.
 */
void rs_cli_setting_line(const struct rs_rule *r, uint64_t key,
    const char *name, const char *value);

/*
 * Formats into buf the HTTP statuses for which has(set, status) is true,
 * as "429, 503" ("none" when there is none); cut short at len.
 */
void rs_cli_status_list(bool (*has)(const void *set, unsigned status),
    const void *set, char *buf, size_t len);

/* explain: prints the rule's `http:` settings (explain_http.c). */
void rs_cli_explain_http(const struct rs_rule *r, const struct rs_settings *s);

/* The breaker settings of r, and target t's breaker now (SPEC 12). */
void rs_cli_explain_breaker(const struct rs_policy *p, const struct rs_rule *r,
    const struct rs_settings *s, const struct rs_target *t);

/*
 * explain's sections about names (explain_names.c): where failover sends
 * the retries of a connect to host (NULL or "" for an address target),
 * resolving it now; and the DNS retry schedule of settings s.
 */
void rs_cli_explain_failover(const char *host, const struct rs_settings *s);
void rs_cli_explain_dns(const struct rs_settings *s);

/* Prints the usage text of the whole tool to f. */
void rs_cli_usage(FILE *f);

/*
 * Prints "resolute: MESSAGE" plus a hint to run `resolute help` on stderr
 * and returns RS_EXIT_USAGE, so that callers can `return rs_cli_usage_error()`.
 */
int rs_cli_usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/*
 * Returns the value of option `name` at argv[*i], written "--x V" (then
 * *i moves to V) or "--x=V"; NULL when argv[*i] is not that option or its
 * value is missing.
 */
const char *rs_cli_opt_value(int argc, char **argv, int *i, const char *name);

/* Prints "resolute: warning: MESSAGE" on stderr. */
void rs_cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Loads the policy file at path with the library's own loader, printing
 * every diagnostic on stderr.  Returns 0 with *out set, or -1.
 */
int rs_cli_load_policy(const char *path, struct rs_policy **out);

/* Loads the compiled-in default policy, named "<built-in>". */
int rs_cli_load_builtin(struct rs_policy **out);

/*
 * Stores in buf the absolute form of path (symbolic links resolved when the
 * file exists).  Returns 0, or -ENAMETOOLONG.
 */
int rs_cli_abs_path(const char *path, char *buf, size_t len);

/*
 * Stores in buf the interposer to preload: $RESOLUTE_LIB, else the
 * libresolute.so beside this executable, else the installed one.
 * Returns 0, or -ENAMETOOLONG.
 */
int rs_cli_lib_path(char *buf, size_t len);

/*
 * Finds COMMAND as execvp() would (a name with a slash is taken as is),
 * storing its path in buf.  Returns 0, -ENOENT or -ENAMETOOLONG.
 */
int rs_cli_find_command(const char *name, char *buf, size_t len);

/*
 * Warns on stderr when the executable at path is statically linked or runs
 * in secure-execution mode (setuid, setgid, file capabilities), where
 * LD_PRELOAD cannot act; `name` is the command as typed.
 */
void rs_cli_warn_unpreloadable(const char *path, const char *name);

/*
 * Replaces path atomically (atomic_file.c): rs_cli_temp_open() creates a
 * temporary file beside it with mode exactly (its name goes to tmp, of
 * len bytes) and returns its stream, or NULL after a message;
 * rs_cli_temp_commit() closes f, flushed to the disk, and renames tmp
 * over path, or removes tmp: returns 0, or -1 after a message.
 */
FILE *rs_cli_temp_open(const char *path, mode_t mode, char *tmp, size_t len);
int rs_cli_temp_commit(FILE *f, const char *tmp, const char *path);

#endif /* RS_CLI_H */
