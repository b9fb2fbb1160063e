/* The agent's process metrics and build_info. See procmetrics.h. */
#include "agent/procmetrics.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "agent/metrics.h"
#include "agent/promtext.h"
#include "base/version.h"

#ifndef NG_REVISION
#define NG_REVISION "unknown"
#endif

int ng_procstat_parse(const char *line, struct ng_procstat *out)
{
	const char *p = strrchr(line, ')');
	uint64_t v[21]; /* fields 4 (ppid) to 24 (rss) */
	char *end;
	int n = 0;

	if (!p || p[1] != ' ')
		return -1;
	p += 2;
	/* field 3 (state) is a letter; fields 4.. are numbers */
	if (!*p || p[1] != ' ')
		return -1;
	p += 2;
	while (n < 21) {
		long long x;

		errno = 0;
		x = strtoll(p, &end, 10);
		if (end == p || errno)
			return -1;
		v[n++] = (uint64_t)(x < 0 ? 0 : x);
		p = end;
		if (*p == ' ')
			p++;
		else if (n < 21)
			return -1;
	}
	/* v[k] is field k + 4 of proc(5) */
	out->utime = v[10];
	out->stime = v[11];
	out->starttime = v[18];
	out->vsize = v[19];
	out->rss = v[20];
	return 0;
}

static double boot_time(void)
{
	char line[256];
	double bt = 0;
	FILE *f = fopen("/proc/stat", "re");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "btime ", 6))
			bt = strtod(line + 6, NULL);
	if (f)
		fclose(f);
	return bt;
}

static uint64_t open_fds(void)
{
	uint64_t n = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n ? n - 1 : 0; /* less the directory's own descriptor */
}

void ng_procmetrics_render(FILE *out)
{
	struct ng_prom_labels l = {{"version", NG_VERSION, "revision", NG_REVISION}};
	struct ng_procstat st = {0};
	struct rlimit rl = {0};
	char line[1024] = "";
	long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	FILE *f = fopen("/proc/self/stat", "re");
	bool ok;

	ng_prom_family(out, NG_METRIC_PREFIX "build_info", "gauge",
		       "1, labelled with the agent's version and the source revision it was built from.");
	ng_prom_u64(out, NG_METRIC_PREFIX "build_info", &l, 1);
	ok = f && fgets(line, sizeof(line), f) && ng_procstat_parse(line, &st) == 0 && tick > 0;
	if (f)
		fclose(f);
	if (ok) {
		ng_prom_family(out, "process_cpu_seconds_total", "counter",
			       "Total user and system CPU time spent in seconds.");
		ng_prom_double(out, "process_cpu_seconds_total", NULL,
			       (double)(st.utime + st.stime) / (double)tick);
		ng_prom_family(out, "process_resident_memory_bytes", "gauge",
			       "Resident memory size in bytes.");
		ng_prom_u64(out, "process_resident_memory_bytes", NULL,
			    st.rss * (uint64_t)(page > 0 ? page : 4096));
		ng_prom_family(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
		ng_prom_u64(out, "process_virtual_memory_bytes", NULL, st.vsize);
		ng_prom_family(out, "process_start_time_seconds", "gauge",
			       "Start time of the process since unix epoch in seconds.");
		ng_prom_double(out, "process_start_time_seconds", NULL,
			       boot_time() + (double)st.starttime / (double)tick);
	}
	ng_prom_family(out, "process_open_fds", "gauge", "Number of open file descriptors.");
	ng_prom_u64(out, "process_open_fds", NULL, open_fds());
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		ng_prom_family(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
		ng_prom_u64(out, "process_max_fds", NULL, (uint64_t)rl.rlim_cur);
	}
}
