/* Rule building: one function per nftables expression, encoded the way nft
 * 1.0 encodes it, so the kernel's dump of our rules reads back identically
 * and `nft list ruleset` prints what a reviewer expects. Allocation failures
 * are remembered in the builder and reported once, at ng_rb_end. */
#ifndef NG_RULEBUILD_H
#define NG_RULEBUILD_H

#include <stdbool.h>
#include <stdint.h>

#include "nft/batch.h"

/* Builds one rule; any allocation failure is remembered and reported once. */
struct ng_rb {
	struct nftnl_rule *r;
	bool oom;
};

#define NG_W0 4 /* first data register word */

/* The register number naming data word `word` (see rulebuild.c). */
uint32_t ng_reg(unsigned word);

void ng_rb_begin(struct ng_rb *rb, const struct ng_batch *b, const char *chain);
/* Appends the rule, with `comment` in its userdata; 0 or -1 (ENOMEM). */
int ng_rb_end(struct ng_rb *rb, struct ng_batch *b, const char *comment);

struct nftnl_expr *ng_rb_add(struct ng_rb *rb, const char *name);
void ng_rb_meta(struct ng_rb *rb, uint32_t key, unsigned word);
void ng_rb_cmp(struct ng_rb *rb, uint32_t op, const void *data, uint32_t len);
void ng_rb_payload(struct ng_rb *rb, uint32_t base, uint32_t offset, uint32_t len, unsigned word);
void ng_rb_lookup(struct ng_rb *rb, const char *set, uint32_t set_id);
/* `!= @set` */
void ng_rb_lookup_inv(struct ng_rb *rb, const char *set, uint32_t set_id);
void ng_rb_verdict(struct ng_rb *rb, int verdict, const char *chain);
/* word NG_W0 &= mask, over `len` bytes (at most 16) */
void ng_rb_mask(struct ng_rb *rb, const void *mask, uint32_t len);
/* (word NG_W0 & mask) OP value, over `len` bytes (bitwise, then cmp) */
void ng_rb_masked_cmp(struct ng_rb *rb, uint32_t op, const void *mask, const void *value, uint32_t len);
/* ct state & mask != 0 */
void ng_rb_ct_state(struct ng_rb *rb, uint32_t mask);
/* ct state & mask == 0 */
void ng_rb_ct_state_none(struct ng_rb *rb, uint32_t mask);
/* counter name NAME (a reference to a named counter object) */
/* ct original proto-src PORT: the connection was opened from that port. */
void ng_rb_ct_orig_sport(struct ng_rb *rb, uint16_t port);
/* counter name "NAME" (an objref to the table's counter object) */
void ng_rb_counter(struct ng_rb *rb, const char *name);
/* An objref to the table's object of type NFT_OBJECT_*: `limit name "NAME"`. */
void ng_rb_objref(struct ng_rb *rb, uint32_t type, const char *name);
void ng_rb_reject(struct ng_rb *rb, uint32_t type, uint8_t code);
/* log prefix "PREFIX" group GROUP (NFLOG) */
void ng_rb_log(struct ng_rb *rb, const char *prefix, uint16_t group);
/* log group GROUP snaplen SNAPLEN queue-threshold 1 (NFLOG, no prefix):
 * the packet's first SNAPLEN bytes, handed to the reader at once */
void ng_rb_log_copy(struct ng_rb *rb, uint16_t group, uint32_t snaplen);
/* queue num NUM (no bypass), as the xt NFQUEUE target (revision 3)
 * through nft_compat: the native `queue` expression needs CONFIG_NFT_QUEUE,
 * which some kernels (this project's CI machine) lack, while nft_compat and
 * xt_NFQUEUE are in every distribution kernel. */
void ng_rb_nfqueue(struct ng_rb *rb, uint16_t num);
/* meta nfproto ipv4|ipv6 */
void ng_rb_nfproto(struct ng_rb *rb, uint8_t fam);
/* meta l4proto PROTO */
void ng_rb_l4proto(struct ng_rb *rb, uint8_t proto);
/* Loads ip/ip6 saddr or daddr into `word`...; returns the next free word. */
unsigned ng_rb_addr(struct ng_rb *rb, uint8_t fam, bool dst, unsigned word);

#endif
