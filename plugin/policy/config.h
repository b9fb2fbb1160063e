/* The plugin's entry in the conflist, validated into plain data. Every
 * refusal the guide lists is made here, before anything touches a kernel:
 * a config that parses is one the plugin can enforce exactly as written. */
#ifndef NG_CONFIG_H
#define NG_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/addr.h"
#include "policy/config_dns.h"
#include "policy/dest.h"
#include "base/err.h"
#include "base/vec.h"

#define NG_CNI_VERSION_MAX       16
#define NG_DEFAULT_MIN_PREFIX_V4 8
#define NG_DEFAULT_MIN_PREFIX_V6 32
#define NG_DEFAULT_MIN_NAME_TTL  3600 /* seconds; see README "DNS names" */
#define NG_DEFAULT_LOG_RATE      10   /* log.ratePerSecond */
#define NG_DEFAULT_LOG_BURST     20   /* log.burst */
/* log.nflogGroup when the entry says nothing: every refusal is logged to
 * it (rate-limited per table), where `observe` and the agent read it.
 * Next to the observer's group, far from the low numbers ulogd and
 * iptables' NFLOG default to. */
#define NG_DEFAULT_LOG_GROUP     65054
/* The node's NFLOG group the host-side tables copy learning pods' DNS to,
 * for the agent's node-side observer (nft/render.h); log.nflogGroup may
 * not be it. */
#define NG_OBSERVE_GROUP         65053
#define NG_ANNOTATIONS_CAP       "io.kubernetes.cri.pod-annotations"
#define NG_DEFAULT_STATE_DIR     "/run/boxxkite-netguard" /* stateDir */
/* README "Limits": the most entries a list may hold, so that every valid
 * configuration renders to a transaction the kernel takes at once (60,000
 * allow entries: ~0.6 s here). Long lists: egress.allow, egress.envelope,
 * ingress.sources, enforce.namespaces; short ones: dns.servers,
 * ingress.ports, metadata.extra. */
#define NG_CONFIG_MAX_LIST       100000
#define NG_CONFIG_MAX_SHORT_LIST 1024

enum ng_deny_action { NG_DENY_REJECT, NG_DENY_DROP };

/* hostMirror: the per-pod table in the node's namespace, on the host side
 * of the pod's link (README "Host-side table"). */
enum ng_host_mirror {
	NG_HOST_REQUIRED, /* default: ADD fails where the pod has no per-pod host device */
	NG_HOST_AUTO,     /* used where possible; the decision log says when not */
	NG_HOST_OFF,
};

typedef NG_VEC(char *) ng_str_vec;

struct ng_config {
	char cni_version[NG_CNI_VERSION_MAX];
	char name[256];
	bool annotations_capability; /* capabilities[NG_ANNOTATIONS_CAP] */
	char log_file[4096];         /* empty: log to stderr */

	ng_str_vec namespaces; /* enforce.namespaces */
	/* enforce.auditNamespaces: the full ruleset, but what it would refuse
	 * is counted and logged as would_deny and let through (metadata is
	 * refused in every mode): a default deny rolled out by looking first. */
	ng_str_vec audit_namespaces;
	bool opt_in; /* enforce.optInAnnotation */

	struct ng_dns_config dns; /* the "dns" object (policy/config_dns.h) */
	ng_dest_vec allow;        /* egress.allow */
	ng_dest_vec envelope;     /* egress.envelope */
	unsigned min_prefix_v4, min_prefix_v6;
	uint32_t min_name_ttl; /* egress.minNameTTL, seconds */
	/* egress.names: "learn" (default): name entries get addresses only
	 * from the pod's own DNS answers, learned by the agent; "resolve": by
	 * the node at ADD, pinned for the pod's life. */
	bool learn;
	char state_dir[4096]; /* stateDir: where ADD records pods for the agent */

	NG_VEC(uint16_t) ingress_ports;           /* ingress.ports */
	NG_VEC(struct ng_prefix) ingress_sources; /* ingress.sources */
	bool allow_node;                          /* ingress.allowNode */
	/* rawPacketGuard: the netdev egress table that holds packet sockets
	 * (AF_PACKET, open to any pod with NET_RAW) to the same destinations. */
	bool raw_guard;
	enum ng_host_mirror host_mirror; /* hostMirror */

	NG_VEC(struct ng_ip) metadata; /* built-in list + metadata.extra */
	enum ng_deny_action deny;

	int nflog_group; /* log.nflogGroup (default NG_DEFAULT_LOG_GROUP), -1 for "log": false; never NG_OBSERVE_GROUP */
	unsigned log_rate;  /* log.ratePerSecond */
	unsigned log_burst; /* log.burst */
};

/* Validates the plugin entry (the whole stdin object; prevResult and
 * runtimeConfig are left to their own parsers). On error: code 7 (or 1 for
 * an unsupported cniVersion) and a message naming the key at fault. */
int ng_config_parse(const json_t *root, struct ng_config *cfg, struct ng_err *err);
void ng_config_free(struct ng_config *cfg);

/* Address-level checks shared with the annotation parser. */
int ng_check_prefix_min(const struct ng_config *cfg, const struct ng_prefix *p, const char *what, int code,
			struct ng_err *err);

/* Walks every string value under `v` and fails (with `code`) naming the path
 * when one contains "CHANGEME": a template value must never reach a node. */
int ng_refuse_placeholders(const json_t *v, const char *path, int code, struct ng_err *err);

#endif
