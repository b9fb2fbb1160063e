/* One line of the flow log (`observe`, `logs`): a refusal (or a would_deny
 * an audited table let through) with where it happened and what refused
 * it, or a note about the stream itself (what the kernel's rate limit
 * skipped, what a reader lost). Built from an NFLOG message and what the
 * reader knows of the pod, or from the agent's refusal of a DNS query;
 * written as one JSON object or one text line, read back from JSON (the
 * agent's stream). Pure.
 *
 * JSON (every line has ts and event):
 *   {"ts":"2026-12-01T10:00:00.123Z","event":"refusal","pod_namespace":"ns","pod_name":"web",
 *    "direction":"egress","table":"pod","category":"egress","verdict":"refused","proto":"tcp",
 *    "src":"10.244.1.2","sport":40443,"dst":"10.50.0.9","dport":443,"comment":"..."}
 *   dns-refused adds "query" and "qtype"; a netdev frame that is not IP
 *   has "ethertype" instead of addresses;
 *   {"event":"skipped","pod_namespace":...,"pod_name":...,"table":"pod","skipped":N,"why":...}
 *   {"event":"lost", ... "lost":N,"why":...}      the kernel could not queue messages to the reader
 *   {"event":"dropped","dropped":N,"why":...}     this reader fell behind the agent's stream
 *   {"event":"unwatched", ... "why":...}          a pod whose refusals cannot be read */
#ifndef NG_FLOWEV_H
#define NG_FLOWEV_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/addr.h"
#include "base/err.h"
#include "kernel/nflog.h"
#include "nft/render_log.h"

enum ng_flow_kind { NG_FLOW_REFUSAL, NG_FLOW_SKIPPED, NG_FLOW_LOST, NG_FLOW_DROPPED, NG_FLOW_UNWATCHED };

#define NG_FLOW_NS_MAX   64  /* a Kubernetes namespace is at most 63 bytes */
#define NG_FLOW_NAME_MAX 254 /* a pod name at most 253 */
#define NG_FLOW_QNAME    72  /* the shown part of a refused query's name (it may carry data) */
#define NG_FLOW_DNS      "dns-refused"

struct ng_flow_ev {
	uint64_t seq;  /* the agent's stream: 1, 2, ...; 0 none */
	int64_t ts_ms; /* unix ms */
	uint8_t kind;  /* enum ng_flow_kind */
	uint8_t table; /* enum ng_log_table */
	bool ingress;  /* direction: into the pod (else out of it) */
	bool would_deny;
	char ns[NG_FLOW_NS_MAX], name[NG_FLOW_NAME_MAX];
	char category[16]; /* metadata egress ingress source raw host dns-refused foreign */
	uint8_t proto;
	uint16_t ethertype;    /* a netdev table's frame that is not IP (no addresses): its type */
	struct ng_ip src, dst; /* fam 0: not known */
	bool have_ports;
	uint16_t sport, dport;
	char comment[160];
	char query[NG_FLOW_QNAME]; /* dns-refused: the name asked for */
	uint16_t qtype;
	uint64_t count; /* skipped, lost, dropped */
};

/* What a reader knows of the pod a message came from. */
struct ng_flow_who {
	const char *ns, *name;
	bool deny_known; /* from its record: the comment names the verdict rule's */
	enum ng_deny_action deny;
};

/* "netguard [would_deny ]<category> <pod>: " -> category, would_deny;
 * false when the prefix is not one of ours. */
bool ng_flowev_parse_prefix(const char *prefix, char *category, size_t len, bool *would_deny);

/* "netguard [would_deny ]<category> <ns>/<name>: " -> ns, name: a pod
 * the reader does not know (the prefix's names, cut at 40 bytes); "?"
 * when the prefix names none. */
void ng_flowev_who_of_prefix(const char *prefix, char *ns, size_t ns_len, char *name, size_t name_len);

/* The event of NFLOG message r, read on the pod's namespace socket
 * (node_side false: the pod's inet table or, a netdev message, its
 * guard) or the node's (the pod's host-side table). A message whose
 * prefix is not ours is category "foreign" with its prefix as the
 * comment (a pod holding NET_ADMIN may log to the group itself). */
void ng_flowev_from_nflog(const struct ng_nflog_record *r, const struct ng_flow_who *who, bool node_side,
			  int64_t now_ms, struct ng_flow_ev *ev);

/* Events about the stream (kind not REFUSAL), `why` into the comment. */
void ng_flowev_note(struct ng_flow_ev *ev, enum ng_flow_kind kind, const char *ns, const char *name,
		    enum ng_log_table table, uint64_t count, const char *why, int64_t now_ms);

/* A refused query's name (cleaned: it may carry any byte) and type. */
void ng_flowev_set_query(struct ng_flow_ev *ev, const char *name, uint16_t qtype);

json_t *ng_flowev_to_json(const struct ng_flow_ev *ev);
/* Back from the agent's JSON: 0, or -1 with err (not an event). */
int ng_flowev_from_json(const json_t *o, struct ng_flow_ev *ev, struct ng_err *err);
/* One text line, without the newline. */
void ng_flowev_text(const struct ng_flow_ev *ev, char *buf, size_t len);

/* What a reader asked for. */
struct ng_flow_filter {
	bool pod; /* only this pod's */
	char ns[NG_FLOW_NS_MAX], name[NG_FLOW_NAME_MAX];
	char category[16]; /* "": every one; "would_deny": every would_deny */
	int64_t since_ms;  /* unix ms, 0: all */
};
/* NS/NAME into the filter; -1 with err when malformed. */
int ng_flow_filter_pod(struct ng_flow_filter *f, const char *ns_name, struct ng_err *err);
/* A known category (or "would_deny"); -1 with err naming the known ones. */
int ng_flow_filter_category(struct ng_flow_filter *f, const char *category, struct ng_err *err);
/* Does ev pass? Notes about the stream pass for their pod (or all, when
 * they name none), whatever the category. */
bool ng_flow_match(const struct ng_flow_filter *f, const struct ng_flow_ev *ev);

/* "30s", "5m", "2h", "500ms", "90" (seconds) -> ms; -1 when malformed. */
int64_t ng_duration_ms(const char *s);

#endif
