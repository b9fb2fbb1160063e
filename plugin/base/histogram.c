#include "base/histogram.h"

const uint64_t ng_hist_bounds_us[NG_HIST_BUCKETS] = {
	500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000,
};

void ng_hist_observe(struct ng_hist *h, uint64_t us)
{
	for (int i = 0; i < NG_HIST_BUCKETS; i++)
		if (us <= ng_hist_bounds_us[i]) {
			h->bucket[i]++;
			break;
		}
	h->count++;
	h->sum_us += us;
}

uint64_t ng_hist_cumulative(const struct ng_hist *h, int i)
{
	uint64_t n = 0;

	for (int k = 0; k <= i && k < NG_HIST_BUCKETS; k++)
		n += h->bucket[k];
	return n;
}
