/* Logging refusals to NFLOG (log.nflogGroup, on by default), rate-limited
 * in the kernel per table, with what the limit held back counted there too:
 *
 *   limit log_limit { rate over R/second burst B packets }    one per table
 *   counter log_skipped        (raw_log_skipped in the guard)
 *   chain refuse_<c> { counter name "<c>_denied"; jump log_<c>; <verdict> }
 *   chain log_<c> {
 *     limit name "log_limit" counter name "log_skipped" return     (over the rate: counted, not logged)
 *     log prefix "netguard [would_deny ]<c> <ns>/<pod>: " group G
 *   }
 *
 * One limit for every refuse chain of a table: a pod flooding one category
 * cannot buy itself more log messages with another, and the reader of a
 * node of 200 pods gets at most R/s (+B) from each of a pod's tables. The
 * limit is one object evaluated once per refused packet, so "logged" and
 * "skipped" add up to the refuse counter exactly (the kernel's arithmetic,
 * not the reader's): `observe` reports the skipped counter's growth.
 *
 * The comment of the rule that refused a packet is a pure function of the
 * table, the category, the pod's mode and deny action and the protocol
 * (ng_refuse_comment): the renderer writes it, `observe` prints it. Pure. */
#ifndef NG_RENDER_LOG_H
#define NG_RENDER_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nft/batch.h"
#include "policy/policy.h"

/* Which table refused: the pod's inet table, its packet-socket guard
 * (netdev, the pod's namespace), its host-side table (the node's). */
enum ng_log_table { NG_LOG_POD, NG_LOG_GUARD, NG_LOG_NODE };
const char *ng_log_table_name(enum ng_log_table t); /* "pod", "guard", "node" */

#define NG_LOG_LIMIT "log_limit"
/* The counter of what table t's limit held back. */
const char *ng_log_skipped_counter(enum ng_log_table t);
/* Is counter `name` one of the tables' log_skipped counters (not a
 * category of refusals)? */
bool ng_counter_is_log_skipped(const char *name);
/* The refuse chain's log chain: "refuse_egress" -> "log_egress". */
void ng_log_chain_name(const char *refuse_chain, char *buf, size_t len);
/* The prefix of each message: "netguard [would_deny ]<category> <ns>/<pod>: ". */
#define NG_LOG_PREFIX_WORD "netguard "
void ng_log_prefix(const struct ng_policy *p, const char *category, bool would_deny, char *buf, size_t len);

/* The limit object and the skipped counter of table t (nothing without
 * p->nflog). Before any rule refers to them. */
int ng_render_log_objects(const struct ng_policy *p, struct ng_batch *b, enum ng_log_table t);
/* Chain `log_chain` with its two rules (p->nflog only). `what` heads the
 * comments. */
int ng_render_log_chain(const struct ng_policy *p, struct ng_batch *b, enum ng_log_table t,
			const char *log_chain, const char *category, bool would_deny, const char *what);

/* What a refuse chain of table t for `category` says it refuses
 * ("egress not allowed"), and whether it rejects (else it drops). */
const char *ng_refuse_what(enum ng_log_table t, const char *category);
bool ng_refuse_rejects(enum ng_log_table t, const char *category, enum ng_deny_action deny);
/* The comment of a refuse chain's verdict rule: audited ("let through"),
 * drop, or reject (a TCP reset for TCP, else ICMP admin-prohibited). */
void ng_refuse_verdict_comment(bool audit, bool reject, bool tcp, const char *what, char *buf, size_t len);
/* The comment of the rule that refused (or, would_deny, let through) a
 * packet of protocol `proto` in table t, category `category`. */
void ng_refuse_comment(enum ng_log_table t, const char *category, bool would_deny, enum ng_deny_action deny,
		       uint8_t proto, char *buf, size_t len);

#endif
