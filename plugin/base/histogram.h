/* A latency histogram with fixed buckets, as Prometheus reads it
 * (cumulative `le` buckets, a sum, a count). The buckets span a plugin
 * invocation's range on a node: 0.5 ms (a skipped pod) to 5 s (an ADD
 * waiting for the agent, a DNS budget). Pure. */
#ifndef NG_HISTOGRAM_H
#define NG_HISTOGRAM_H

#include <stdint.h>

#define NG_HIST_BUCKETS 13 /* finite upper bounds; +Inf is the count */

extern const uint64_t ng_hist_bounds_us[NG_HIST_BUCKETS];

struct ng_hist {
	uint64_t bucket[NG_HIST_BUCKETS]; /* observations <= bound, not cumulative */
	uint64_t count, sum_us;
};

void ng_hist_observe(struct ng_hist *h, uint64_t us);
/* Observations <= ng_hist_bounds_us[i] (the cumulative bucket). */
uint64_t ng_hist_cumulative(const struct ng_hist *h, int i);

#endif
