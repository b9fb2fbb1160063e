/* A ruleset as comparable text: one line per table, counter, set, set
 * element, chain and rule, built from nf_tables netlink messages. The same
 * code reads the batch ADD would send and the kernel's dump of what is
 * there, so CHECK compares like with like and names each difference in
 * words a reviewer can match against `nft --debug=netlink list ruleset`. */
#ifndef NG_SNAPSHOT_H
#define NG_SNAPSHOT_H

#include <linux/netlink.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "nft/batch.h"
#include "policy/policy.h"
#include "base/vec.h"

/* Elements of the DNS-name sets, which CHECK cannot recompute (DNS
 * answers change) and so cross-checks instead. */
struct ng_name_elem {
	char set[32];   /* names_v4 / names_v6 */
	bool ttl;       /* from the _ttl set */
	char key[330];  /* key-keyend, hex: what the twin match compares */
	char text[200]; /* the same in nft's syntax, for messages ("" if unknown) */
	time_t expires; /* pinned elements: from the element comment */
	/* pinned elements in "resolve" mode: the name they were resolved from
	 * (element comment "name X"), and their addresses */
	char dns_name[256];
	struct ng_ip lo, hi;
};

/* Seconds of clock slack when deciding an element should still be there. */
#define NG_EXPIRY_GRACE 5

struct ng_snapshot {
	NG_VEC(char *) lines;
	NG_VEC(char *) problems; /* name-set elements outside every name entry */
	/* Rule positions per chain, for "rule 3 of chain egress". */
	NG_VEC(char *) chain_names;
	NG_VEC(unsigned) chain_rules;
	/* When set, elements of the name sets are checked against these
	 * shapes instead of being listed (their addresses change with DNS). */
	const ng_elem_vec *name_ports;
	NG_VEC(struct ng_name_elem) name_elems;
	const char *table; /* when set, objects of other tables are ignored */
	uint8_t family;    /* objects of other families are ignored; 0: inet */
	bool oom;
};

/* Adds one nf_tables message (NEWTABLE, NEWOBJ, NEWSET, NEWSETELEM,
 * NEWCHAIN, NEWRULE; others are ignored). A DELTABLE message empties the
 * snapshot, so a replace batch reads as the table it leaves behind. */
void ng_snapshot_add(struct ng_snapshot *s, const struct nlmsghdr *nlh);

/* The snapshot of what a batch leaves in the kernel. */
int ng_snapshot_from_batch(struct ng_snapshot *s, const struct ng_batch *b);

void ng_snapshot_free(struct ng_snapshot *s);
/* Empties the snapshot, keeping what says which table it is of (table,
 * family) and name_ports. */
void ng_snapshot_reset(struct ng_snapshot *s);

#endif
