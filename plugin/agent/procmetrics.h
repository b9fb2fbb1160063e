/* The agent's own process as Prometheus' client libraries export it
 * (process_cpu_seconds_total, process_resident_memory_bytes,
 * process_virtual_memory_bytes, process_open_fds, process_max_fds,
 * process_start_time_seconds: the names Felix and Cilium export), and
 * boxxkite_netguard_build_info{version,revision}. The parse of
 * /proc/self/stat is pure; the render reads /proc/self. */
#ifndef NG_PROCMETRICS_H
#define NG_PROCMETRICS_H

#include <stdint.h>
#include <stdio.h>

struct ng_procstat {
	uint64_t utime, stime; /* clock ticks */
	uint64_t starttime;    /* clock ticks after boot */
	uint64_t vsize;        /* bytes */
	uint64_t rss;          /* pages */
};

/* One /proc/PID/stat line (the command may hold spaces and parentheses:
 * the fields start after the last ')'). 0, or -1 when it does not parse. */
int ng_procstat_parse(const char *line, struct ng_procstat *out);

/* build_info and the process_* families, read now. */
void ng_procmetrics_render(FILE *out);

#endif
