/* An nf_tables transaction over the transport (kernel/nl.h): the batch
 * leaves in ONE sendmsg (one skb, so the kernel sees one transaction),
 * exactly one reply per message is read, and the failing object is named
 * from the batch's map. */
#ifndef NG_NLCOMMIT_H
#define NG_NLCOMMIT_H

#include <stddef.h>

#include "base/err.h"
#include "kernel/nl.h"
#include "nft/batch.h"

/* The largest transaction sent, in bytes (README "Limits"): the policy
 * layer's own limits keep a valid configuration far below it, so this is
 * a last bound, checked before anything is sent. */
#define NG_NL_BATCH_MAX ((size_t)256 << 20)

/* Starts a batch for `table` numbered from the transport's next sequence
 * number; ng_nl_commit moves that number past it (the one place that
 * knows a transaction's numbering: BEGIN, the body, END, the marker). */
int ng_nl_batch_init(struct ng_nl *nl, struct ng_batch *b, const char *table, struct ng_err *err);

/* Sends the batch in one sendmsg, then a marker request; the kernel
 * answers only the messages that fail, then the marker. On the first
 * failure: code 110 naming the object (the kernel has rolled the whole
 * transaction back). A send that failed (nothing reached the kernel): code
 * 11, nl->outcome NG_NL_NOT_SENT. A lost marker (a timeout): code 11,
 * NG_NL_UNKNOWN. Above NG_NL_BATCH_MAX bytes: code 7, nothing sent. */
int ng_nl_commit(struct ng_nl *nl, const struct ng_batch *b, struct ng_err *err);

#endif
