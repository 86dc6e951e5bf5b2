/* SPDX-License-Identifier: MIT */
/*
 * cmd_check.c - `resolute check FILE...`: validate policy files.
 *
 * Every problem goes to stderr as FILE:LINE:COL: error: MESSAGE, the format
 * editors and CI annotators parse; valid files are listed on stdout.
 */
#include "cli.h"

#include <string.h>

#include "policy_yaml.h"

/* Checks one file; returns whether it is valid. */
static int check_one(const char *path)
{
	struct rs_policy *p = NULL;

	if (rs_cli_load_policy(path, &p) < 0)
		return 0;
	rs_policy_free(p);
	printf("%s: ok\n", path);
	return 1;
}

int rs_cmd_check(int argc, char **argv)
{
	int bad = 0, nfiles = 0, opts = 1;

	/* Options come first; "--" ends them, so "-x.yaml" can be checked. */
	for (int i = 1; i < argc; i++) {
		if (opts && strcmp(argv[i], "--") == 0) {
			opts = 0;
			continue;
		}
		if (opts && argv[i][0] == '-' && argv[i][1])
			return rs_cli_usage_error("check: unknown option '%s'",
			    argv[i]);
		nfiles++;
	}
	if (nfiles == 0)
		return rs_cli_usage_error("check: no policy file given");
	opts = 1;
	for (int i = 1; i < argc; i++) {
		if (opts && strcmp(argv[i], "--") == 0) {
			opts = 0;
			continue;
		}
		bad += !check_one(argv[i]);
	}
	return bad ? RS_EXIT_FAIL : RS_EXIT_OK;
}
