/* The two clocks the project reads: CLOCK_MONOTONIC for every duration,
 * deadline and expiry (it never jumps), CLOCK_REALTIME only for times a
 * person or another process reads (log lines, records, /metrics). */
#ifndef NG_CLOCK_H
#define NG_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t ng_ts_us(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000 + ts->tv_nsec / 1000;
}

/* Monotonic microseconds / milliseconds. */
static inline int64_t ng_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ng_ts_us(&ts);
}

static inline int64_t ng_mono_ms(void)
{
	return ng_mono_us() / 1000;
}

/* Unix time in milliseconds. */
static inline int64_t ng_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
