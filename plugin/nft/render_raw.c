/* The packet-socket guard: table netdev boxxkite_netguard.
 *
 * A process with CAP_NET_RAW (which containerd and CRI-O grant every
 * container by default) can open an AF_PACKET socket and write whole
 * Ethernet frames to the pod's interface. Those frames never pass the inet
 * hooks the policy table sits on; the netdev egress hook (Linux 5.16, and
 * 5.17 for sockets with PACKET_QDISC_BYPASS) sees every frame leaving the
 * device, from the stack and from packet sockets alike. No mark or
 * conntrack state tells the two apart there (SO_MARK needs only NET_RAW,
 * and conntrack is not available in the netdev family), so this chain is a
 * stateless mirror of the egress policy: a frame leaves only if it is a
 * packet the policy table would have let out.
 *
 * table netdev boxxkite_netguard {
 *   chain egress { type filter hook egress device "<CNI_IFNAME>" priority 0; policy drop;
 *     [meta iif != <ifindex> accept]                    (host side only, see below)
 *     [ether saddr != <pod's MAC> jump refuse]          (host side only)
 *     ether type arp meta protocol arp arp htype 1 arp ptype ip arp hlen 6 arp plen 4
 *       arp operation 1-2 [arp saddr ether <MAC>] arp saddr ip <pod's address> meta len < 64
 *       accept                                           (one per address)
 *     ether type ip meta protocol ip jump raw_v4        (the frame's type and skb's agree)
 *     ether type ip6 meta protocol ip6 jump raw_v6
 *     jump refuse_raw
 *   }
 *   chain raw_v4 {
 *     ip saddr != @source_v4 jump refuse_raw           (the pod's own addresses only)
 *     ip hdrlength != 5 jump refuse_raw           (IPv4 options: source routes among them)
 *     ip daddr @metadata_v4 jump refuse_raw
 *     ip daddr . meta l4proto . th dport @dns_v4 accept
 *     ip daddr . meta l4proto . th dport @allow_v4 accept
 *     ip daddr . meta l4proto . th dport @names_v4 @names_v4_ttl accept
 *     meta l4proto tcp tcp flags & (syn|ack) != syn ip daddr . th sport @ingress_v4 accept
 *     meta l4proto tcp tcp flags & (syn|ack) != syn ip daddr @node_v4 accept
 *     jump refuse_raw
 *   }
 *   chain raw_v6 { ip6 saddr :: ip6 daddr . icmpv6 type @nd_v6 accept (DAD); ip6 saddr ::
 *     <MLDv2 report header> jump mld_report; the same (exthdr rt exists; ip6 daddr & MASK
 *     @metadata_v6_embedded for each IPv6 form), ip6 daddr . icmpv6 type @nd_v6 accept, and
 *     <MLDv2 report header> jump mld_report }
 *   chain mld_report, mld_report_1 ...: the records of the pod's own
 *     solicited-node groups (nft/render_mld.h)
 *   chain refuse_raw { counter name "raw_denied"; [jump log_raw]; drop }   (nft/render_log.h)
 *
 * Audited: refuse_raw counts into raw_would_deny and accepts; the metadata
 * rules jump to refuse_raw_metadata instead, which counts into raw_denied
 * and drops.
 * }
 *
 * The host-side table (render_host.c) is this same body in the node's
 * namespace on the ingress of the pod link's peer, plus the bracketed rules:
 * everything the pod sends, by any socket (AF_XDP included, which skips the
 * pod's own egress hook), and out of reach of a pod holding CAP_NET_ADMIN.
 *
 * The replies of the policy's "ct state established" rule become the two
 * reply rules: TCP from an ingress port to an ingress source, TCP to the
 * node (kubelet probes), never a bare SYN, so a packet socket cannot open
 * a connection through them. Not mirrored, so dropped on the wire: ICMP
 * errors the pod's stack sends about allowed flows, and non-first IP
 * fragments (no ports to match; TCP does not fragment, and UDP payloads to
 * allowed destinations must fit the MTU). The metadata rules come first, as
 * in the policy table, so that no set accepting something (a DNS server, a
 * name's address) can ever let a frame to them out. */
#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>

#include "nft/render.h"
#include "nft/render_chain.h"
#include "nft/render_guard.h"
#include "nft/render_mld.h"
#include "nft/render_objs.h"
#include "nft/render_raw.h"
#include "nft/rulebuild.h"

#define ETHERTYPE_OFFSET 12 /* in the Ethernet header */
#define ETH_HLEN_BYTES   14 /* the Ethernet header (no VLAN tag: the guard refuses those) */

/* The frame's own EtherType is `type` and skb->protocol (what nftables
 * parses the frame as; a packet socket chooses it) says the same. */
static void frame_is(struct ng_rb *rb, uint16_t type, bool and_protocol)
{
	uint16_t be = htons(type);

	ng_rb_payload(rb, NFT_PAYLOAD_LL_HEADER, ETHERTYPE_OFFSET, 2, NG_W0);
	ng_rb_cmp(rb, NFT_CMP_EQ, &be, 2);
	if (and_protocol) {
		ng_rb_meta(rb, NFT_META_PROTOCOL, NG_W0);
		ng_rb_cmp(rb, NFT_CMP_EQ, &be, 2);
	}
}

/* ARP as the pod's stack sends it, nothing more: Ethernet/IPv4 (htype 1,
 * ptype 0x0800, hlen 6, plen 4), a request or a reply, from one of the
 * pod's own addresses (and, on the host side, its own MAC), at most 63
 * bytes on the wire in the guard and 61 on the host side (the stack's are
 * 42; a packet socket may pad to 60). meta len is skb->len: the whole frame
 * on the guard's egress hook, without the 14-byte Ethernet header on the
 * host side's ingress, where "< 64" alone would let 77 bytes through.
 * Without this, ARP would carry ~1.5 KB of anything per frame to the node's
 * segment, and a packet socket could claim the gateway's address there (ARP
 * spoofing the pod's neighbours). */
static int arp_rule(struct ng_batch *b, const struct ng_mirror *m, const struct ng_ip *pod)
{
	static const uint8_t fixed[6] = {0x00, 0x01, 0x08, 0x00, 0x06, 0x04};
	uint16_t op_lo = htons(1), op_hi = htons(2);
	uint32_t len_mask = ~(uint32_t)63, zero = 0; /* meta len is host order: mask, not compare */
	char ip[NG_IP_STRLEN], c[NG_IP_STRLEN + 64];
	struct ng_rb rb;

	ng_rb_begin(&rb, b, m->base);
	frame_is(&rb, 0x0806, true);
	ng_rb_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, 0, 6, NG_W0);
	ng_rb_cmp(&rb, NFT_CMP_EQ, fixed, 6);
	ng_rb_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, 6, 2, NG_W0);
	ng_rb_cmp(&rb, NFT_CMP_GTE, &op_lo, 2);
	ng_rb_cmp(&rb, NFT_CMP_LTE, &op_hi, 2);
	if (m->mac) {
		ng_rb_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, 8, 6, NG_W0);
		ng_rb_cmp(&rb, NFT_CMP_EQ, m->mac, 6);
	}
	ng_rb_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, 14, 4, NG_W0);
	ng_rb_cmp(&rb, NFT_CMP_EQ, pod->a, 4);
	ng_rb_meta(&rb, NFT_META_LEN, NG_W0);
	ng_rb_masked_cmp(&rb, NFT_CMP_EQ, &len_mask, &zero, 4);
	if (m->hook == NF_NETDEV_INGRESS) {
		/* Below 48 after the header (len & 0x30 != 0x30 given < 64):
		 * at most 61 bytes on the wire. */
		uint32_t hi_mask = 0x30;

		ng_rb_meta(&rb, NFT_META_LEN, NG_W0);
		ng_rb_masked_cmp(&rb, NFT_CMP_NEQ, &hi_mask, &hi_mask, 4);
	}
	ng_rb_verdict(&rb, NF_ACCEPT, NULL);
	ng_ip_format(pod, ip, sizeof(ip));
	snprintf(c, sizeof(c), "ARP request or reply from the pod's %s, no more than %d bytes", ip,
		 m->hook == NF_NETDEV_INGRESS ? 61 : 63);
	return ng_rb_end(&rb, b, c);
}

static int family_chain(const struct ng_policy *p, struct ng_batch *b, const char *chain,
			const struct ng_set_spec *sets, int f, const struct ng_mirror *m)
{
	/* Audited: cloud metadata jumps to the chain that still drops. */
	const char *refuse = m->refuse, *meta = p->audit ? m->refuse_metadata : m->refuse;
	bool observe = m->observe;
	const char *v = f == 0 ? "(IPv4)" : "(IPv6)";
	char c[2][96];
	struct ng_rb rb;
	int rc = 0;

	rc |= ng_render_no_source_route(
		b, &(struct ng_guard_ctx){.chain = chain, .protocol = true, .refuse = refuse},
		f == 0 ? 4 : 6);
	/* meta protocol again in each rule (the chain was entered on it):
	 * it costs a compare and lets `nft list` print "ip daddr". */
	rc |= ng_render_source_rules(b, (struct ng_lookup_rule){.chain = chain, .protocol = true}, sets,
				     refuse, f);
	/* The DNS lookup (1) copies the query to the node-side observer: it
	 * comes after the source checks, so the copy is of what really leaves. */
	for (int i = 0; i < NG_EGRESS_LOOKUPS; i++)
		rc |= ng_render_egress_lookup(b,
					      (struct ng_lookup_rule){.chain = chain,
								      .protocol = true,
								      .observe = observe && i == 1},
					      sets, i, f, meta);
	/* The policy's "ct state established" for the pod's replies. */
	snprintf(c[0], sizeof(c[0]), "replies from ingress.ports to ingress.sources, never a bare SYN %s", v);
	snprintf(c[1], sizeof(c[1]), "TCP to the node, never a bare SYN: replies to kubelet probes %s", v);
#define RAW(s, ...)                                                                    \
	{                                                                              \
		.chain = chain, .set = (s), .dst = true, .protocol = true, __VA_ARGS__ \
	}
	const struct ng_lookup_rule rules[] = {
		RAW(&sets[NG_S_IN4 + f], .sport = true, .no_syn_only = true, .comment = c[0]),
		RAW(&sets[NG_S_NODE4 + f], .no_syn_only = true, .l4proto = IPPROTO_TCP, .comment = c[1]),
		RAW(&sets[NG_S_ND6], .comment = "IPv6 neighbour discovery, on-link only"),
	};
#undef RAW
	size_t n = sizeof(rules) / sizeof(rules[0]) - (f == 0);

	for (size_t i = 0; i < n; i++)
		rc |= ng_render_lookup_rule(b, &rules[i]);
	if (f == 1)
		rc |= ng_render_mld_jump(b, &(struct ng_guard_ctx){.chain = chain, .protocol = true},
					 p->mld6.n, false);
	ng_rb_begin(&rb, b, chain);
	ng_rb_verdict(&rb, NFT_JUMP, refuse);
	rc |= ng_rb_end(&rb, b, "default deny");
	return rc;
}

/* The host side's first two rules: the device this table was made for,
 * and the pod's own MAC. */
static int device_rules(struct ng_batch *b, const struct ng_mirror *m)
{
	uint32_t idx = (uint32_t)m->ifindex;
	char c[96];
	struct ng_rb rb;

	if (m->ifindex > 0) {
		ng_rb_begin(&rb, b, m->base);
		ng_rb_meta(&rb, NFT_META_IIF, NG_W0);
		ng_rb_cmp(&rb, NFT_CMP_NEQ, &idx, 4);
		ng_rb_verdict(&rb, NF_ACCEPT, NULL);
		snprintf(c, sizeof(c), "not ifindex %d: a later device of the same name is not this pod's",
			 m->ifindex);
		if (ng_rb_end(&rb, b, c) < 0)
			return -1;
	}
	if (m->mac) {
		ng_rb_begin(&rb, b, m->base);
		ng_rb_payload(&rb, NFT_PAYLOAD_LL_HEADER, 6, 6, NG_W0);
		ng_rb_cmp(&rb, NFT_CMP_NEQ, m->mac, 6);
		ng_rb_verdict(&rb, NFT_JUMP, m->refuse);
		snprintf(c, sizeof(c), "only from the pod's MAC %02x:%02x:%02x:%02x:%02x:%02x", m->mac[0],
			 m->mac[1], m->mac[2], m->mac[3], m->mac[4], m->mac[5]);
		if (ng_rb_end(&rb, b, c) < 0)
			return -1;
	}
	return 0;
}

int ng_render_mirror_body(const struct ng_policy *p, struct ng_batch *b, const struct ng_set_spec *inet_sets,
			  const struct ng_mirror *m)
{
	struct ng_set_spec sets[NG_S_COUNT];
	struct ng_rb rb;
	int rc = 0;

	if (ng_render_refuse_counter(p, b, m->counter) < 0 ||
	    (p->audit && ng_render_counter(b, m->counter) < 0) ||
	    ng_render_log_objects(p, b, m->log_table) < 0)
		return -1;
	/* The same sets and elements, in this table (sets are per table). */
	for (int i = 0; i < NG_S_COUNT; i++) {
		sets[i] = inet_sets[i];
		if (ng_set_render(b, &sets[i]) < 0)
			return -1;
	}
	if (ng_render_chain(b, m->refuse, -1, NULL) < 0 ||
	    (p->audit && ng_render_chain(b, m->refuse_metadata, -1, NULL) < 0) ||
	    ng_render_chain(b, NG_RAW_CHAIN_V4, -1, NULL) < 0 ||
	    ng_render_chain(b, NG_RAW_CHAIN_V6, -1, NULL) < 0 ||
	    ng_render_mld_chains(b, sets[NG_S_MLD6].ips->n) < 0 ||
	    ng_render_chain(b, m->base, m->hook, m->device) < 0)
		return -1;
	rc |= ng_render_refuse_chain(p, b, m->refuse, m->counter, m->category, m->log_table);
	if (p->audit)
		rc |= ng_render_refuse_chain(p, b, m->refuse_metadata, m->counter, "metadata", m->log_table);
	rc |= family_chain(p, b, NG_RAW_CHAIN_V4, sets, 0, m);
	rc |= family_chain(p, b, NG_RAW_CHAIN_V6, sets, 1, m);

	rc |= device_rules(b, m);
	for (size_t i = 0; i < p->pod4.n; i++)
		rc |= arp_rule(b, m, &p->pod4.v[i]);
	ng_rb_begin(&rb, b, m->base);
	frame_is(&rb, 0x0800, true);
	ng_rb_verdict(&rb, NFT_JUMP, NG_RAW_CHAIN_V4);
	rc |= ng_rb_end(&rb, b, "IPv4, as the frame says and as the kernel parses it");
	ng_rb_begin(&rb, b, m->base);
	frame_is(&rb, 0x86dd, true);
	ng_rb_verdict(&rb, NFT_JUMP, NG_RAW_CHAIN_V6);
	rc |= ng_rb_end(&rb, b, "IPv6, as the frame says and as the kernel parses it");
	ng_rb_begin(&rb, b, m->base);
	ng_rb_verdict(&rb, NFT_JUMP, m->refuse);
	rc |= ng_rb_end(&rb, b, "default deny: any other frame (VLAN tags included)");
	/* meta len is skb->len: on the egress hook the frame with its
	 * Ethernet header; on ingress the device has pulled that header. */
	rc |= ng_render_mld(b, &sets[NG_S_MLD6], m->hook == NF_NETDEV_INGRESS ? 0 : ETH_HLEN_BYTES);
	return rc ? -1 : 0;
}

int ng_render_raw_body(const struct ng_policy *p, struct ng_batch *b, const struct ng_set_spec *inet_sets)
{
	const struct ng_mirror guard = {
		.base = NG_RAW_CHAIN_EGRESS,
		.hook = NF_NETDEV_EGRESS,
		.device = p->ifname,
		.refuse = NG_RAW_CHAIN_REFUSE,
		.refuse_metadata = NG_RAW_CHAIN_REFUSE "_metadata",
		.counter = NG_COUNTER_RAW,
		.category = "raw",
		.log_table = NG_LOG_GUARD,
	};

	return ng_render_mirror_body(p, b, inet_sets, &guard);
}
