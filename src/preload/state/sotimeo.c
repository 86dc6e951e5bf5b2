/* SPDX-License-Identifier: MIT */
/*
 * sotimeo.c - the program's own socket timeouts, rounded up to whole ms.
 *
 * Thread-safe.
 */
#include "sotimeo.h"

#include <sys/socket.h>
#include <sys/time.h>

#include "clock.h"
#include "real.h"

int64_t rs_sotimeo_ms(int fd, bool send)
{
	struct timeval tv = { 0, 0 };
	socklen_t len = sizeof(tv);

	if (rs_real_getsockopt(fd, SOL_SOCKET, send ? SO_SNDTIMEO :
		SO_RCVTIMEO, &tv, &len) < 0)
		return 0;
	return rs_clock_timeval_ms(&tv);
}
