/* Where the flow log comes from. See flowsrc.h. */
#include "node/flowsrc.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "kernel/counters.h"
#include "kernel/netns.h"
#include "kernel/nl_netns.h"
#include "nft/render.h"

#define NODE_RCVBUF (1024 * 1024) /* every pod's host-side messages share it */

int ng_flow_pod_from_record(const struct ng_record *r, const struct ng_policy *pol, struct ng_flow_pod *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->key, sizeof(out->key), "%s", r->key);
	if (ng_podref_copy(&out->pod, &r->pod) < 0)
		return -1;
	out->nflog = pol->nflog;
	out->group = pol->nflog_group;
	out->deny_known = true;
	out->deny = pol->deny;
	out->guard = pol->raw_guard;
	for (size_t i = 0; i < r->tables.n; i++)
		if (r->tables.v[i].in_node) {
			out->host = true;
			snprintf(out->host_table, sizeof(out->host_table), "%s", r->tables.v[i].name);
		}
	out->host_ifindex = out->host ? (uint32_t)pol->host_ifindex : 0;
	return 0;
}

int ng_flow_pod_copy(struct ng_flow_pod *dst, const struct ng_flow_pod *src)
{
	*dst = *src;
	return ng_podref_copy(&dst->pod, &src->pod);
}

void ng_flow_pod_free(struct ng_flow_pod *p)
{
	ng_podref_free(&p->pod);
}

bool ng_flow_pod_same(const struct ng_flow_pod *a, const struct ng_flow_pod *b)
{
	return !strcmp(a->key, b->key) && a->nflog == b->nflog && a->group == b->group &&
	       a->deny_known == b->deny_known && a->deny == b->deny && a->guard == b->guard &&
	       a->host == b->host && a->host_ifindex == b->host_ifindex &&
	       !strcmp(a->host_table, b->host_table) && a->pod.netns_dev == b->pod.netns_dev &&
	       a->pod.netns_ino == b->pod.netns_ino && !strcmp(a->pod.ns, b->pod.ns) &&
	       !strcmp(a->pod.name, b->pod.name) &&
	       !strcmp(a->pod.netns ? a->pod.netns : "", b->pod.netns ? b->pod.netns : "");
}

/* ---- one pod ---------------------------------------------------------------- */

/* The skipped counters of the pod's own tables (inet and guard, one dump). */
static void read_pod_skipped(struct ng_flowsrc *s, uint64_t now[3], bool got[3])
{
	ng_counter_vec v = {0};
	struct ng_err err = {0};
	const struct ng_counter *c;

	if (ng_counters_read(&s->nl, NG_TABLE, &v, &err) == 0) {
		if ((c = ng_counter_find(&v, ng_log_skipped_counter(NG_LOG_POD)))) {
			now[NG_LOG_POD] = c->packets;
			got[NG_LOG_POD] = true;
		}
		if ((c = ng_counter_find(&v, ng_log_skipped_counter(NG_LOG_GUARD)))) {
			now[NG_LOG_GUARD] = c->packets;
			got[NG_LOG_GUARD] = true;
		}
	}
	ng_vec_free(&v);
}

static void read_node_skipped(struct ng_flowsrc *s, struct ng_nl *node_nl, uint64_t now[3], bool got[3])
{
	ng_counter_vec v = {0};
	struct ng_err err = {0};
	const struct ng_counter *c;

	if (s->info.host && node_nl && ng_counters_read(node_nl, s->info.host_table, &v, &err) == 0 &&
	    (c = ng_counter_find(&v, ng_log_skipped_counter(NG_LOG_NODE)))) {
		now[NG_LOG_NODE] = c->packets;
		got[NG_LOG_NODE] = true;
	}
	ng_vec_free(&v);
}

int ng_flowsrc_open(struct ng_flowsrc *s, const struct ng_flow_pod *info, int netns_fd, struct ng_err *err)
{
	int fd = netns_fd, rc;
	uint64_t now[3] = {0};
	bool got[3] = {false};

	memset(s, 0, sizeof(*s));
	s->log.nl.fd = s->nl.fd = -1;
	if (ng_flow_pod_copy(&s->info, info) < 0)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	if (!info->nflog) {
		ng_flow_pod_free(&s->info);
		return ng_fail(err, NG_E_CONFIG, "its tables log nothing (\"log\": false)");
	}
	if (fd < 0) {
		rc = ng_netns_open_pod(&info->pod, &fd, err);
		if (rc != 0) {
			ng_flow_pod_free(&s->info);
			return rc > 0 ? ng_fail(err, NG_E_NETNS, "its network namespace is gone") : -1;
		}
	}
	rc = ng_nflog_open(fd, &s->log, err);
	if (rc == 0 && (rc = ng_nflog_bind(&s->log, info->group, NG_FLOWSRC_COPY, err)) < 0)
		ng_nflog_close(&s->log);
	if (rc == 0 && (rc = ng_nl_open_netns(fd, NULL, &s->nl, err)) < 0)
		ng_nflog_close(&s->log);
	if (fd != netns_fd)
		close(fd);
	if (rc < 0) {
		ng_flow_pod_free(&s->info);
		return -1;
	}
	s->open = true;
	read_pod_skipped(s, now, got);
	for (int t = 0; t < 3; t++) {
		s->skipped[t] = now[t];
		s->skipped_known[t] = got[t];
	}
	return 0;
}

int ng_flowsrc_fd(const struct ng_flowsrc *s)
{
	return s->open ? s->log.nl.fd : -1;
}

struct read_ctx {
	struct ng_flowsrc *s;
	ng_flow_emit_fn emit;
	void *data;
	int64_t now_wall, now_mono;
};

static void one_record(const struct ng_nflog_record *r, void *data)
{
	struct read_ctx *c = data;
	struct ng_flow_who who = {.ns = c->s->info.pod.ns,
				  .name = c->s->info.pod.name,
				  .deny_known = c->s->info.deny_known,
				  .deny = c->s->info.deny};
	char ns[NG_FLOW_NS_MAX], name[NG_FLOW_NAME_MAX];
	struct ng_flow_ev ev;

	/* A namespace given without its pod (logs --netns): the prefix names it. */
	if (!who.ns[0] && !who.name[0]) {
		ng_flowev_who_of_prefix(r->prefix, ns, sizeof(ns), name, sizeof(name));
		who.ns = ns;
		who.name = name;
	}

	ng_flowev_from_nflog(r, &who, false, c->now_wall, &ev);
	c->s->poll_until[ev.table] = c->now_mono + NG_FLOWSRC_POLL_MS;
	c->emit(&ev, r, c->data);
}

/* The reader fell behind (ENOBUFS): the messages are gone, said once per loss. */
static void tell_lost(unsigned long lost, unsigned long *told, const char *ns, const char *name,
		      ng_flow_emit_fn emit, void *data)
{
	struct ng_flow_ev ev;

	if (lost == *told)
		return;
	ng_flowev_note(&ev, NG_FLOW_LOST, ns, name, NG_LOG_POD, lost - *told,
		       "the kernel could not queue log messages to this reader (ENOBUFS): at least one "
		       "per loss",
		       ng_wall_ms());
	*told = lost;
	emit(&ev, NULL, data);
}

int ng_flowsrc_read(struct ng_flowsrc *s, size_t max, ng_flow_emit_fn emit, void *data, struct ng_err *err)
{
	struct read_ctx c = {s, emit, data, ng_wall_ms(), ng_mono_ms()};
	int n;

	if (!s->open)
		return 0;
	n = ng_nflog_read(&s->log, 0, max, one_record, &c, err);
	tell_lost(s->log.lost, &s->lost_told, s->info.pod.ns, s->info.pod.name, emit, data);
	return n;
}

void ng_flowsrc_node_logged(struct ng_flowsrc *s, int64_t now_ms)
{
	s->poll_until[NG_LOG_NODE] = now_ms + NG_FLOWSRC_POLL_MS;
}

void ng_flowsrc_skipped(struct ng_flowsrc *s, struct ng_nl *node_nl, int64_t now_ms, bool all,
			ng_flow_emit_fn emit, void *data)
{
	static const char why[] = "over log.ratePerSecond: refused and counted by the kernel, not logged";
	uint64_t now[3] = {0};
	bool got[3] = {false}, want[3];

	if (!s->open)
		return;
	for (int t = 0; t < 3; t++) {
		want[t] = all || s->poll_until[t] != 0;
		/* The last read is the first one after the table went quiet. */
		if (s->poll_until[t] && now_ms > s->poll_until[t])
			s->poll_until[t] = 0;
	}
	if (want[NG_LOG_POD] || want[NG_LOG_GUARD])
		read_pod_skipped(s, now, got);
	if (want[NG_LOG_NODE])
		read_node_skipped(s, node_nl, now, got);
	for (int t = 0; t < 3; t++) {
		struct ng_flow_ev ev;

		if (!want[t] || !got[t])
			continue;
		/* A first value is where counting starts; a smaller one is a new
		 * table (a repair, a retried ADD): counting starts there again. */
		if (s->skipped_known[t] && now[t] > s->skipped[t]) {
			ng_flowev_note(&ev, NG_FLOW_SKIPPED, s->info.pod.ns, s->info.pod.name,
				       (enum ng_log_table)t, now[t] - s->skipped[t], why, ng_wall_ms());
			emit(&ev, NULL, data);
		}
		s->skipped[t] = now[t];
		s->skipped_known[t] = true;
	}
}

void ng_flowsrc_close(struct ng_flowsrc *s)
{
	if (s->open) {
		ng_nflog_close(&s->log);
		ng_nl_close(&s->nl);
	}
	s->open = false;
	ng_flow_pod_free(&s->info);
}

/* ---- the node's namespace ---------------------------------------------------- */

int ng_flownode_open(struct ng_flownode *n, struct ng_err *err)
{
	memset(n, 0, sizeof(*n));
	n->log.nl.fd = n->nl.fd = -1;
	if (ng_nflog_open(-1, &n->log, err) < 0)
		return -1;
	ng_nl_rcvbuf(&n->log.nl, NODE_RCVBUF);
	if (ng_nl_open(&n->nl, err) < 0) {
		ng_nflog_close(&n->log);
		return -1;
	}
	n->open = n->nl_open = true;
	return 0;
}

int ng_flownode_bind(struct ng_flownode *n, uint16_t group, struct ng_err *err)
{
	for (size_t i = 0; i < n->log.n_groups; i++)
		if (n->log.group[i] == group)
			return 0;
	return ng_nflog_bind(&n->log, group, NG_FLOWSRC_COPY, err);
}

struct node_ctx {
	ng_flow_find_fn find;
	void *fdata;
	ng_flow_emit_fn emit;
	void *data;
	int64_t now_wall, now_mono;
};

static void node_record(const struct ng_nflog_record *r, void *data)
{
	struct node_ctx *c = data;
	/* The host-side table hooks the peer's ingress: what the pod sent. */
	struct ng_flowsrc *s = c->find(c->fdata, r->indev);
	char ns[NG_FLOW_NS_MAX], name[NG_FLOW_NAME_MAX];
	struct ng_flow_who who = {.ns = ns, .name = name};
	struct ng_flow_ev ev;

	if (s) {
		who = (struct ng_flow_who){.ns = s->info.pod.ns,
					   .name = s->info.pod.name,
					   .deny_known = s->info.deny_known,
					   .deny = s->info.deny};
		ng_flowsrc_node_logged(s, c->now_mono);
	} else {
		ng_flowev_who_of_prefix(r->prefix, ns, sizeof(ns), name, sizeof(name));
	}
	ng_flowev_from_nflog(r, &who, true, c->now_wall, &ev);
	c->emit(&ev, r, c->data);
}

int ng_flownode_read(struct ng_flownode *n, size_t max, ng_flow_find_fn find, void *fdata,
		     ng_flow_emit_fn emit, void *data, struct ng_err *err)
{
	struct node_ctx c = {find, fdata, emit, data, ng_wall_ms(), ng_mono_ms()};
	int rc;

	if (!n->open)
		return 0;
	rc = ng_nflog_read(&n->log, 0, max, node_record, &c, err);
	tell_lost(n->log.lost, &n->lost_told, "", "", emit, data);
	return rc;
}

void ng_flownode_close(struct ng_flownode *n)
{
	if (n->open)
		ng_nflog_close(&n->log);
	if (n->nl_open)
		ng_nl_close(&n->nl);
	n->open = n->nl_open = false;
}
