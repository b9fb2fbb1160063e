/* The plugin entry's "dns" object: the resolvers, and what a pod may ask
 * them (README "DNS queries"). Part of ng_config_parse; declared apart so
 * config.c stays about the entry as a whole. */
#ifndef NG_CONFIG_DNS_H
#define NG_CONFIG_DNS_H

#include <jansson.h>

#include "base/err.h"
#include "policy/config.h"

/* dns.servers, dns.queries, dns.alwaysAllowed, dns.refusedAnswer. */
int ng_config_parse_dns(const json_t *root, struct ng_config *cfg, struct ng_err *err);

/* After egress.names is known: dns.queries defaults to "listed" in learn
 * mode and "any" in resolve mode, where "listed" is refused (nothing
 * checks a query there: the node resolves names at ADD). */
int ng_config_finish_dns(const json_t *root, struct ng_config *cfg, struct ng_err *err);

#endif
