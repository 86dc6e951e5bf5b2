/*
 * clock.c - monotonic time in milliseconds, and the process deadline.
 */
#include "clock.h"

#include <time.h>

static int64_t read_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t rs_clock_now_ms(void)
{
	return read_ms(CLOCK_MONOTONIC);
}

int64_t rs_clock_epoch_ms(void)
{
	return read_ms(CLOCK_REALTIME);
}

int64_t rs_clock_epoch_to_mono_ms(int64_t epoch_ms)
{
	if (epoch_ms == RS_NEVER)
		return RS_NEVER;
	return rs_clock_now_ms() + (epoch_ms - rs_clock_epoch_ms());
}

int rs_clock_remaining_ms(int64_t when, int64_t now)
{
	if (when == RS_NEVER)
		return -1;
	if (when <= now)
		return 0;
	if (when - now > INT32_MAX)
		return INT32_MAX;
	return (int)(when - now);
}
