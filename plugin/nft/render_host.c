/* The host-side table, as nft would print it:
 *
 * table netdev ngh.<container id>.<ifname> {   comment "boxxkite-netguard V host: ifindex N dev DEV network NET pod NS/NAME"
 *   chain from_pod { type filter hook ingress device "<peer>" priority 0; policy drop;
 *     meta iif != N accept          (a later device of the same name: not this table's)
 *     ether saddr != <pod MAC> jump refuse_host
 *     ... the packet-socket guard's rules (render_raw.c) ...
 *   }
 *   chain raw_v4, raw_v6        (the guard's, source checks first)
 *   chain refuse_host { counter name "host_denied"; [jump log_host]; drop }   (nft/render_log.h)
 *   chain to_pod { type filter hook egress device "<peer>" priority 0; policy accept;   (learning pods)
 *     meta oif != N accept
 *     meta protocol ip ip saddr . meta l4proto . th sport @dns_v4 log group 65053 snaplen 65000 accept
 *     meta protocol ip6 ip6 saddr . meta l4proto . th sport @dns_v6 log group 65053 snaplen 65000 accept
 *   }
 *   and, in raw_v4/raw_v6, the DNS rule logs each query to the same group
 *   the inet table's sets, same names and key layouts (the agent writes the
 *   same name elements into all three tables)
 * }
 *
 * Ingress of the peer is everything the pod sends: the stack's packets,
 * packet sockets and AF_XDP alike. Egress of the peer (what enters the pod)
 * is left to the pod's inet table: a stateless mirror of "established"
 * there would have to let in anything with the ACK bit from anywhere; its
 * one chain, to_pod, only copies DNS answers to the node-side observer
 * (NG_OBSERVE_GROUP): the node side learns only from what crossed here. */
#include "nft/render_host.h"

#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nft/render_chain.h"
#include "nft/render_objs.h"
#include "nft/render_raw.h"
#include "nft/rulebuild.h"

static bool plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

/* Appends s encoded at out[*at]; false when it does not fit. */
static bool encode(const char *s, char *out, size_t len, size_t *at)
{
	static const char hex[] = "0123456789abcdef";

	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		size_t need = plain(*c) ? 1 : 3;

		if (*at + need >= len)
			return false;
		if (need == 1) {
			out[(*at)++] = (char)*c;
		} else {
			out[(*at)++] = '_';
			out[(*at)++] = hex[*c >> 4];
			out[(*at)++] = hex[*c & 15];
		}
	}
	out[*at] = '\0';
	return true;
}

int ng_host_table_name(const char *container_id, const char *ifname, char *buf, size_t len)
{
	size_t at = strlen(NG_HOST_TABLE_PREFIX);

	if (!container_id || !*container_id || !ifname || !*ifname)
		return -EINVAL;
	if (len > NG_HOST_TABLE_MAX)
		len = NG_HOST_TABLE_MAX;
	if (len <= at)
		return -ENAMETOOLONG;
	memcpy(buf, NG_HOST_TABLE_PREFIX, at + 1);
	if (!encode(container_id, buf, len, &at) || at + 1 >= len)
		return -ENAMETOOLONG;
	buf[at++] = '.';
	buf[at] = '\0';
	if (!encode(ifname, buf, len, &at))
		return -ENAMETOOLONG;
	return 0;
}

static int unhex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Decodes [s, end) into out; false on a malformed escape or overflow. */
static bool decode(const char *s, const char *end, char *out, size_t len)
{
	size_t n = 0;

	if (s == end)
		return false;
	while (s < end) {
		int c = (unsigned char)*s;

		if (*s == '_') {
			int hi = end - s >= 3 ? unhex(s[1]) : -1, lo = end - s >= 3 ? unhex(s[2]) : -1;

			if (hi < 0 || lo < 0 || plain((unsigned char)(hi << 4 | lo)) || (hi << 4 | lo) == 0)
				return false;
			c = hi << 4 | lo;
			s += 3;
		} else if (plain((unsigned char)*s)) {
			s++;
		} else {
			return false;
		}
		if (n + 1 >= len)
			return false;
		out[n++] = (char)c;
	}
	out[n] = '\0';
	return true;
}

bool ng_host_table_parse(const char *name, char *container_id, size_t id_len, char *ifname, size_t if_len)
{
	const char *body, *dot;

	if (strncmp(name, NG_HOST_TABLE_PREFIX, strlen(NG_HOST_TABLE_PREFIX)) != 0)
		return false;
	body = name + strlen(NG_HOST_TABLE_PREFIX);
	dot = strchr(body, '.');
	if (!dot || strchr(dot + 1, '.'))
		return false;
	return decode(body, dot, container_id, id_len) && decode(dot + 1, dot + strlen(dot), ifname, if_len);
}

/* Copies the word at *at (up to a space) into out; false when empty or too long. */
static bool word(const char **at, char *out, size_t len)
{
	size_t n = strcspn(*at, " ");

	if (n == 0 || n >= len)
		return false;
	memcpy(out, *at, n);
	out[n] = '\0';
	*at += n;
	return true;
}

bool ng_host_comment_parse(const char *comment, int *ifindex, char *dev, char *network, size_t len)
{
	const char *at = strstr(comment, " host: ifindex ");
	char *end;
	long idx;

	if (strncmp(comment, "boxxkite-netguard ", 18) != 0 || !at)
		return false;
	idx = strtol(at + 15, &end, 10);
	if (end == at + 15 || idx <= 0 || idx > 0x7fffffff || strncmp(end, " dev ", 5) != 0)
		return false;
	at = end + 5;
	if (!word(&at, dev, 16) || strncmp(at, " network ", 9) != 0)
		return false;
	at += 9;
	if (!word(&at, network, len))
		return false;
	*ifindex = (int)idx;
	return true;
}

/* to_pod: a copy of every DNS answer from the pod's resolvers, as it
 * crosses the peer towards the pod, for the node-side observer; accepts
 * everything (the pod's inet table filters what comes in). */
static int observe_chain(const struct ng_policy *p, struct ng_batch *b, const struct ng_set_spec *sets)
{
	uint32_t idx = (uint32_t)p->host_ifindex;
	struct ng_rb rb;
	int rc;

	if (ng_render_base_chain(b, NG_HOST_CHAIN_OBSERVE, NF_NETDEV_EGRESS, p->host_dev, 0, NF_ACCEPT) < 0)
		return -1;
	ng_rb_begin(&rb, b, NG_HOST_CHAIN_OBSERVE);
	ng_rb_meta(&rb, NFT_META_OIF, NG_W0);
	ng_rb_cmp(&rb, NFT_CMP_NEQ, &idx, 4);
	ng_rb_verdict(&rb, NF_ACCEPT, NULL);
	rc = ng_rb_end(&rb, b, "not the pod's peer: a later device of the same name");
	for (int f = 0; f < 2 && rc == 0; f++)
		rc = ng_render_lookup_rule(
			b,
			&(struct ng_lookup_rule){
				.chain = NG_HOST_CHAIN_OBSERVE,
				.set = &sets[NG_S_DNS4 + f],
				.protocol = true,
				.sport = true,
				.observe = true,
				.comment = f == 0 ? "DNS answers to the pod: a copy to the observer (IPv4)"
						  : "DNS answers to the pod: a copy to the observer (IPv6)"});
	return rc;
}

/* Removes table `name` of b->family, keeping b->table. */
static int remove_table(struct ng_batch *b, const char *name, bool must_exist, const char *what)
{
	char keep[sizeof(b->table)];
	int rc;

	memcpy(keep, b->table, sizeof(keep));
	if (name != b->table) /* never snprintf a buffer into itself */
		snprintf(b->table, sizeof(b->table), "%s", name);
	rc = must_exist ? 0 : ng_render_table(b, NFT_MSG_NEWTABLE, NLM_F_CREATE, NULL, "create if missing");
	if (rc == 0)
		rc = ng_render_table(b, NFT_MSG_DELTABLE, 0, NULL, what);
	memcpy(b->table, keep, sizeof(keep));
	return rc;
}

int ng_render_host(const struct ng_policy *p, bool replace, const char *const *stale, size_t n_stale,
		   struct ng_batch *b, struct ng_err *err)
{
	struct ng_set_spec sets[NG_S_COUNT];
	const struct ng_mirror host = {
		.base = NG_HOST_CHAIN,
		.hook = NF_NETDEV_INGRESS,
		.device = p->host_dev,
		.ifindex = p->host_ifindex,
		.mac = p->mac,
		.refuse = NG_HOST_CHAIN_REFUSE,
		.refuse_metadata = NG_HOST_CHAIN_REFUSE "_metadata",
		.counter = NG_COUNTER_HOST,
		.category = "host",
		.log_table = NG_LOG_NODE,
		.observe = p->learn,
	};
	int rc = 0;

	b->family = NFPROTO_NETDEV;
	ng_render_set_specs(p, sets);
	/* The node side's learned sets hold what the node side learned. */
	for (int f = 0; p->learn && f < 2; f++) {
		sets[NG_S_NAMES4 + f].elems = &p->learned_node[0][f];
		sets[NG_S_TTL4 + f].elems = &p->learned_node[1][f];
	}
	for (size_t i = 0; rc == 0 && i < n_stale; i++)
		rc = remove_table(b, stale[i], false, "stale: its device is gone or another pod's");
	if (rc == 0 && replace)
		rc = remove_table(b, b->table, false, "remove the previous host-side table");
	if (rc == 0)
		rc = ng_render_table(b, NFT_MSG_NEWTABLE, replace ? NLM_F_CREATE : NLM_F_CREATE | NLM_F_EXCL,
				     p->host_comment, replace ? "new host side" : "create host side");
	if (rc == 0)
		rc = ng_render_mirror_body(p, b, sets, &host);
	if (rc == 0 && p->learn)
		rc = observe_chain(p, b, sets);
	if (rc < 0)
		return ng_fail(err, NG_E_INTERNAL, "out of memory while rendering the host-side table");
	return ng_batch_finish(b, err);
}

int ng_render_host_delete(const char *const *names, size_t n, bool must_exist, struct ng_batch *b,
			  struct ng_err *err)
{
	b->family = NFPROTO_NETDEV;
	for (size_t i = 0; i < n; i++)
		if (remove_table(b, names[i], must_exist, "delete host side") < 0)
			return ng_fail(err, NG_E_INTERNAL, "out of memory while rendering the delete");
	return ng_batch_finish(b, err);
}
