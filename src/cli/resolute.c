/* SPDX-License-Identifier: MIT */
/*
 * resolute.c - the resolute command: entry point, usage and dispatch.
 *
 * Each subcommand lives in its own cmd_*.c file; `check` and `explain` run
 * the very parser and matcher that the interposer runs (src/core/policy/), so
 * that what the tool says is what the library does.
 */
#include "cli.h"

#include <string.h>

#ifndef RS_VERSION
#define RS_VERSION "0.0.0"
#endif

void rs_cli_usage(FILE *f)
{
	fputs("usage: resolute run [--policy FILE] [--deadline DURATION] "
	      "[--log LEVEL] -- COMMAND [ARG...]\n"
	      "       resolute check FILE...\n"
	      "       resolute explain [--policy FILE] TARGET\n"
	      "       resolute systemd [--policy FILE] [--install] UNIT\n"
	      "       resolute stats [--policy FILE] [--format text|json|prometheus]\n"
	      "                      [--output FILE]\n"
	      "       resolute stats [--policy FILE] --histogram RULE\n"
	      "       resolute stats --prune\n"
	      "       resolute suggest [--policy FILE] [--multiplier N]\n"
	      "       resolute version | help\n"
	      "\n"
	      "  run      run COMMAND with connect/read timeouts and retries\n"
	      "  check    validate policy files; problems as "
	      "FILE:LINE:COL: error: MESSAGE\n"
	      "  explain  show the rule, settings and backoff schedule for "
	      "TARGET\n"
	      "           (HOST[:PORT], IP[:PORT], [IPv6][:PORT] or "
	      "unix:PATH)\n"
	      "  systemd  print (or --install) a drop-in that preloads "
	      "resolute into UNIT\n"
	      "  stats    show the counters and shared retry budgets of this user's\n"
	      "           processes, per policy file and rule, and the latency\n"
	      "           they learned\n"
	      "  suggest  print the policy with timeouts of N x the learned "
	      "p99\n"
	      "\n"
	      "Durations: 250ms, 1.5s, 2m.  See resolute(1) and "
	      "resolute-policy(5).\n", f);
}

static int cmd_version(void)
{
	printf("resolute %s\n", RS_VERSION);
	return RS_EXIT_OK;
}

static int cmd_help(void)
{
	rs_cli_usage(stdout);
	return RS_EXIT_OK;
}

int main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2) {
		rs_cli_usage(stderr);
		return RS_EXIT_USAGE;
	}
	cmd = argv[1];
	if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0)
		return cmd_version();
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 ||
	    strcmp(cmd, "-h") == 0)
		return cmd_help();
	if (strcmp(cmd, "check") == 0)
		return rs_cmd_check(argc - 1, argv + 1);
	if (strcmp(cmd, "explain") == 0)
		return rs_cmd_explain(argc - 1, argv + 1);
	if (strcmp(cmd, "run") == 0)
		return rs_cmd_run(argc - 1, argv + 1);
	if (strcmp(cmd, "systemd") == 0)
		return rs_cmd_systemd(argc - 1, argv + 1);
	if (strcmp(cmd, "stats") == 0)
		return rs_cmd_stats(argc - 1, argv + 1);
	if (strcmp(cmd, "suggest") == 0)
		return rs_cmd_suggest(argc - 1, argv + 1);
	return rs_cli_usage_error("unknown command '%s'", cmd);
}
