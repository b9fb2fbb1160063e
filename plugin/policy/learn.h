/* The learner: which addresses of a parsed DNS answer a pod may now reach,
 * on which protocols and ports, and for how long. Pure: the agent feeds it
 * the pod's policy and one parsed answer, and commits what comes out.
 *
 * An address is learned for a name entry when the entry matches the
 * question or any name on the question's CNAME chain (case and trailing dot
 * normalised by the parser, wildcards by whole labels), and its A/AAAA
 * record's owner is on that chain. Records for names off the chain (an
 * answer to another question), and metadata addresses, are never learned. */
#ifndef NG_LEARN_H
#define NG_LEARN_H

#include "policy/dnsparse.h"
#include "policy/policy.h"

/* Does the entry match `name` (lowercase, no trailing dot)? */
bool ng_name_entry_matches(const struct ng_name_entry *e, const char *name);

/* An address a name entry taught (status --names: which name it is for). */
struct ng_learn_pair {
	uint16_t entry; /* index into the policy's name_entries */
	struct ng_ip ip;
};
typedef NG_VEC(struct ng_learn_pair) ng_learn_pair_vec;

struct ng_learn_result {
	/* Elements for names_vX (single ports) and names_vX_ranges, by family
	 * index; each with its lifetime as timeout (seconds). */
	ng_elem_vec single[2], ranges[2];
	unsigned metadata;       /* metadata addresses refused */
	unsigned addresses;      /* distinct (address, entry) pairs learned */
	ng_learn_pair_vec pairs; /* those pairs (an address named twice: twice) */
	int first_entry;         /* the first entry that matched, -1: none */
};

/* Fills `r` (emptied first) from answer `m`. 0, or -1 out of memory. */
int ng_learn(const struct ng_policy *p, const struct ng_dns_msg *m, struct ng_learn_result *r);
void ng_learn_result_free(struct ng_learn_result *r);

#endif
