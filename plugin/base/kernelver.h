/* The running kernel's version, for features the plugin cannot probe
 * safely: the netdev egress hook covers packet sockets from Linux 5.17
 * (5.16 added the hook, but not for PACKET_QDISC_BYPASS sockets), and an
 * older kernel would take the chain, or refuse it, without saying which. */
#ifndef NG_KERNELVER_H
#define NG_KERNELVER_H

#include <stdbool.h>

#define NG_RAW_GUARD_MAJOR 5
#define NG_RAW_GUARD_MINOR 17

/* Is `release` (uname -r: "6.1.0-18-amd64") at least major.minor? A
 * release that does not start with "N.N" is not. */
bool ng_kernel_at_least(const char *release, int major, int minor);

#endif
