/* The packet-socket guard: the netdev table on the pod's interface that
 * holds frames written with AF_PACKET to the egress policy, statelessly. */
#ifndef NG_RENDER_RAW_H
#define NG_RENDER_RAW_H

#include <stdint.h>

#include "nft/batch.h"
#include "nft/render_log.h"
#include "nft/render_sets.h"
#include "policy/policy.h"

/* A netdev table that mirrors the egress policy statelessly: the
 * packet-socket guard in the pod (egress of the pod's interface) and the
 * host-side table in the node (ingress of the pod link's peer,
 * render_host.h) are the same rules and sets, built here; the host side
 * adds the device and MAC checks. */
struct ng_mirror {
	const char *base;   /* the base chain */
	int hook;           /* NF_NETDEV_EGRESS or NF_NETDEV_INGRESS */
	const char *device; /* what it hooks */
	/* > 0: the base chain lets alone a device of another index: since Linux
	 * 6.16 a netdev chain binds by name and hooks the next device of that
	 * name, which this table was not made for. */
	int ifindex;
	const uint8_t *mac; /* set: frames (and ARP senders) only from this MAC */
	const char *refuse; /* the refuse chain */
	/* Audited tables only: the chain cloud metadata jumps to, which still
	 * drops (elsewhere metadata shares `refuse`, which drops anyway). */
	const char *refuse_metadata;
	const char *counter;
	const char *category; /* log prefix word */
	enum ng_log_table log_table;
	bool observe; /* the DNS rule copies each query to NG_OBSERVE_GROUP (host side, learning) */
};
int ng_render_mirror_body(const struct ng_policy *p, struct ng_batch *b, const struct ng_set_spec *inet_sets,
			  const struct ng_mirror *m);

/* The guard's body, from the inet table's set list (the same sets, so the
 * two tables cannot disagree on a destination). */
int ng_render_raw_body(const struct ng_policy *p, struct ng_batch *b, const struct ng_set_spec *inet_sets);

#endif
