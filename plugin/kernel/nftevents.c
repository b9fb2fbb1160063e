#include "kernel/nftevents.h"

#include <libmnl/libmnl.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <string.h>

#include "kernel/nl.h"
#include "kernel/nl_netns.h"

/* The name attribute of each message type's object (the table name is
 * attribute 1 in every one of them). */
static int object_attr(uint16_t type)
{
	switch (type) {
	case NFT_MSG_NEWCHAIN:
	case NFT_MSG_DELCHAIN: return NFTA_CHAIN_NAME;
	case NFT_MSG_NEWRULE:
	case NFT_MSG_DELRULE: return NFTA_RULE_CHAIN;
	case NFT_MSG_NEWSET:
	case NFT_MSG_DELSET: return NFTA_SET_NAME;
	case NFT_MSG_NEWSETELEM:
	case NFT_MSG_DELSETELEM: return NFTA_SET_ELEM_LIST_SET;
	case NFT_MSG_NEWOBJ:
	case NFT_MSG_DELOBJ: return NFTA_OBJ_NAME;
	case NFT_MSG_NEWFLOWTABLE:
	case NFT_MSG_DELFLOWTABLE: return NFTA_FLOWTABLE_NAME;
	default: return 0;
	}
}

int ng_nft_event_parse(const struct nlmsghdr *nlh, struct ng_nft_event *ev)
{
	const struct nfgenmsg *g;
	const struct nlattr *a;
	uint16_t type;
	int oattr;

	memset(ev, 0, sizeof(*ev));
	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*g) ||
	    NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_NFTABLES)
		return -1;
	type = NFNL_MSG_TYPE(nlh->nlmsg_type);
	if (type == NFT_MSG_NEWGEN || type >= NFT_MSG_MAX)
		return -1;
	g = mnl_nlmsg_get_payload(nlh);
	ev->type = type;
	ev->family = g->nfgen_family;
	ev->portid = nlh->nlmsg_pid;
	oattr = object_attr(type);
	mnl_attr_for_each(a, nlh, sizeof(*g)) {
		uint16_t t = mnl_attr_get_type(a);
		const char *s;
		size_t n;

		if (t != 1 && (oattr == 0 || t != oattr))
			continue;
		if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0)
			return -1;
		s = mnl_attr_get_str(a);
		n = strlen(s);
		if (t == 1 && n < sizeof(ev->table))
			memcpy(ev->table, s, n + 1);
		else if (t == oattr && n < sizeof(ev->object))
			memcpy(ev->object, s, n + 1);
	}
	return ev->table[0] ? 0 : -1;
}

const char *ng_nft_event_what(uint16_t type)
{
	switch (type) {
	case NFT_MSG_NEWTABLE: return "table added or changed";
	case NFT_MSG_DELTABLE: return "table deleted";
	case NFT_MSG_NEWCHAIN: return "chain added or changed";
	case NFT_MSG_DELCHAIN: return "chain deleted";
	case NFT_MSG_NEWRULE: return "rule added";
	case NFT_MSG_DELRULE: return "rule deleted";
	case NFT_MSG_NEWSET: return "set added";
	case NFT_MSG_DELSET: return "set deleted";
	case NFT_MSG_NEWSETELEM: return "set element added";
	case NFT_MSG_DELSETELEM: return "set element deleted";
	case NFT_MSG_NEWOBJ: return "object added or reset";
	case NFT_MSG_DELOBJ: return "object deleted";
	default: return "changed";
	}
}

int ng_nft_events_open(int netns_fd, struct ng_err *err)
{
	struct ng_nl nl = {.fd = -1};

	if (ng_nl_open_proto_netns(netns_fd, NETLINK_NETFILTER, NFNLGRP_NFTABLES, &nl, err) < 0)
		return -1;
	/* Room for a table replace's burst of events (a few hundred small
	 * messages); an overrun only means "check everything". Unprivileged
	 * RCVBUF is capped by rmem_max; FORCE needs CAP_NET_ADMIN, which the
	 * agent has. Per pod: keep it modest. The node's socket sees every
	 * ADD's and DEL's host-side table and every node-side commit of the
	 * learner: at 200 pods with churn 256 KiB overran, and a deleted
	 * host-side table waited for the periodic CHECK. */
	ng_nl_rcvbuf(&nl, netns_fd < 0 ? NG_NFT_EVENTS_NODE_RCVBUF : NG_NFT_EVENTS_POD_RCVBUF);
	/* Handed over: the ops thread polls and reads the bare socket. */
	return nl.fd;
}
