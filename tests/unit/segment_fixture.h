/* SPDX-License-Identifier: MIT */
/*
 * segment_fixture.h - for the unit tests of the shared segment: each test
 * gets a file of its own under /dev/shm (named after the test program and
 * its pid, removed before and after), and rules made of a match text and
 * a line.  Included by one test file each, so everything is static.
 */
#ifndef RS_TEST_SEGMENT_FIXTURE_H
#define RS_TEST_SEGMENT_FIXTURE_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "policy.h"
#include "shm.h"

static char seg[128];

static int seg_setup(void **state)
{
	extern const char *__progname;

	(void)state;
	snprintf(seg, sizeof(seg), RS_SHM_DIR "/resolute-%s-%d", __progname,
	    (int)getpid());
	unlink(seg);
	return 0;
}

static int seg_teardown(void **state)
{
	(void)state;
	unlink(seg);
	return 0;
}

static struct rs_rule mkrule(const char *text, unsigned line)
{
	struct rs_rule r;

	memset(&r, 0, sizeof(r));
	r.match.text = (char *)text;
	r.line = line;
	return r;
}

#endif /* RS_TEST_SEGMENT_FIXTURE_H */
