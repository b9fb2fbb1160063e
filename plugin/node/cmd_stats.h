/* `boxxkite-netguard stats`: a pod's deny counters, per category, as JSON or
 * in the Prometheus text exposition format. */
#ifndef NG_STATS_H
#define NG_STATS_H

int ng_stats_main(int argc, char **argv);

#endif
