/* Small pieces the snapshot's files share (snapshot.c decodes, snapnames.c
 * checks the DNS-name sets, snapdiff.c compares): hex keys, the comment
 * TLV of a userdata blob, and the list of problems. */
#ifndef NG_SNAPTEXT_H
#define NG_SNAPTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "nft/snapshot.h"

#define NG_SNAP_LINE_MAX 4096

/* `data` as lowercase hex into out (truncated to fit). */
void ng_snap_hex(char *out, size_t outlen, const void *data, uint32_t len);

/* The comment in a table's, rule's or set element's userdata (type 0 in
 * each: NFTNL_UDATA_{TABLE,RULE,SET_ELEM}_COMMENT), read with libnftnl's own
 * TLV parser; "" when there is none or the blob is malformed. */
void ng_snap_comment(const void *data, uint32_t len, char *out, size_t outlen);

/* Records a problem that makes the snapshot differ whatever it is compared
 * with (an unreadable message, a name-set element no entry explains). */
void ng_snap_problem(struct ng_snapshot *s, const char *msg);

#endif
