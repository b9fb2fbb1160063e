/* The containers every table of ours is made of: the table itself, its
 * chains (base chains on a hook, or plain ones), its named objects and
 * counters. One NEW message each, into the batch; messages go to the
 * family in b->family. What the rest of nft/ builds rules and sets in, so it
 * includes nothing of theirs. */
#ifndef NG_RENDER_CHAIN_H
#define NG_RENDER_CHAIN_H

#include <stdint.h>

#include "nft/batch.h"

/* NEWTABLE / DELTABLE `b->table` in family b->family. */
int ng_render_table(struct ng_batch *b, uint16_t type, uint16_t flags, const char *comment, const char *what);
/* A chain; a base chain (policy drop) when hook >= 0, on `device` when set. */
int ng_render_chain(struct ng_batch *b, const char *name, int hook, const char *device);
/* The same with its priority and policy (NF_ACCEPT / NF_DROP). */
int ng_render_base_chain(struct ng_batch *b, const char *name, int hook, const char *device, int prio,
			 uint32_t policy);
int ng_render_counter(struct ng_batch *b, const char *name);
/* Object `o` (its own attributes set; type NFT_OBJECT_*) as `name` of
 * b's table, into the batch; o is freed. -1 when o is NULL. */
struct nftnl_obj;
int ng_render_object(struct ng_batch *b, struct nftnl_obj *o, uint32_t type, const char *name,
		     const char *what);

#endif
