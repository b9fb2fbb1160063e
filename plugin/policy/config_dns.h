/* The plugin entry's "dns" object: the resolvers, and what a pod may ask
 * them (README "DNS queries"). A part of the entry (policy/config.h embeds
 * it) parsed on its own: it needs nothing else of the entry but egress.names,
 * which the caller passes to ng_dns_config_finish. */
#ifndef NG_CONFIG_DNS_H
#define NG_CONFIG_DNS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "base/vec.h"
#include "policy/dest.h"

#define NG_DNS_SERVERS_MAX 1024 /* dns.servers entries (README "Limits") */
#define NG_DNS_ALWAYS_MAX  1024 /* dns.alwaysAllowed entries */

struct ng_dns_config {
	NG_VEC(struct ng_ip) servers; /* dns.servers */
	ng_dest_vec always;           /* dns.alwaysAllowed: NAME / WILDCARD entries, no ports */
	/* dns.queries "listed": a pod asks only for names its policy lists
	 * (its name entries) or dns.alwaysAllowed; "any": every query leaves. */
	bool queries_listed;
	uint8_t refused_rcode; /* dns.refusedAnswer: 3 NXDOMAIN (default), 5 REFUSED */
};

/* dns.servers, dns.queries, dns.alwaysAllowed, dns.refusedAnswer from the
 * entry `root` (code 7 naming the key at fault). The servers are not yet
 * checked against the metadata list: the caller does that. */
int ng_dns_config_parse(const json_t *root, struct ng_dns_config *d, struct ng_err *err);

/* Once egress.names is known: dns.queries defaults to "listed" in learn
 * mode and "any" in resolve mode, where "listed" (and alwaysAllowed) are
 * refused: nothing checks a query there, the node resolves names at ADD. */
int ng_dns_config_finish(const json_t *root, bool learn, struct ng_dns_config *d, struct ng_err *err);

void ng_dns_config_free(struct ng_dns_config *d);

#endif
