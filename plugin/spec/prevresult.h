/* The previous plugin's result: what we read from it (the pod's addresses and
 * the gateways, which are the node's side) and how we hand it back, converted
 * to the cniVersion the runtime asked for. */
#ifndef NG_PREVRESULT_H
#define NG_PREVRESULT_H

/* The most addresses a prevResult may hold (README "Limits"). */
#define NG_PREV_MAX_IPS 4096

#include <jansson.h>

#include "base/addr.h"
#include "base/err.h"
#include "base/vec.h"

struct ng_ifaddr {
	struct ng_ip ip; /* the address itself */
	uint8_t plen;    /* its on-link prefix length */
};

struct ng_mac {
	uint8_t a[6];
};

struct ng_prev {
	NG_VEC(struct ng_ifaddr) addrs; /* ips[].address */
	NG_VEC(struct ng_ip) gateways;  /* ips[].gateway, deduplicated */
	/* The MACs of interfaces[] inside the sandbox ("sandbox" set, a valid
	 * "mac"): the pod's EUI-64 link-local address derives from them. */
	NG_VEC(struct ng_mac) macs;
};

/* Reads ips[] from prevResult. Malformed entries are code 7 naming the
 * index; a result with no ips is valid (nothing to learn from it). */
int ng_prev_parse(const json_t *prev, struct ng_prev *out, struct ng_err *err);
void ng_prev_free(struct ng_prev *p);

/* Returns a new result in the shape of `version`: cniVersion set, ips[].version
 * present before 1.0.0 and absent from it, 1.1.0-only fields dropped below
 * 1.1.0. Every other field is kept as the primary plugin wrote it. NULL with
 * err filled on failure. */
json_t *ng_prev_convert(const json_t *prev, const char *version, struct ng_err *err);

#endif
