/* One pod in the ops thread (agent/ops_int.h): picked up from its decision
 * record, its namespace's events read, CHECKed, repaired, counted. */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/agent.h"
#include "base/clock.h"
#include "kernel/nftevents.h"
#include "agent/ops_int.h"
#include "base/nlwalk.h"
#include "kernel/nl.h"
#include "kernel/netns.h"
#include "kernel/ruleset.h"
#include "nft/render.h"
#include "kernel/nl_netns.h"
#include "node/podstate.h"
#include "state/recpolicy.h"

static bool enforced(const struct ng_opod *p)
{
	return !strcmp(p->d.decision, "enforced");
}

void ng_opod_free(struct ng_opod *p)
{
	if (p->ev_fd >= 0)
		close(p->ev_fd);
	if (p->nl_open)
		ng_nl_close(&p->nl);
	if (p->pol_ok)
		ng_policy_free(&p->pol);
	ng_record_free(&p->d);
	ng_view_pod_free(&p->vp);
	free(p);
}

/* The sockets inside the pod's namespace: queries and events. */
static int open_pod(struct ng_opod *p, struct ng_err *err)
{
	int fd, rc = ng_netns_open_pod(&p->d.pod, &fd, err);

	if (rc != 0)
		return rc;
	rc = ng_nl_open_netns(fd, NULL, &p->nl, err);
	if (rc == 0) {
		p->nl_open = true;
		p->ev_fd = ng_nft_events_open(fd, err);
		rc = p->ev_fd < 0 ? -1 : 0;
	}
	close(fd);
	return rc;
}

struct ng_opod *ng_opod_load(struct ng_ops *o, const char *path, uint64_t ino)
{
	struct ng_opod *p = calloc(1, sizeof(*p));
	struct ng_err err = {0};
	int rc;

	(void)o;
	if (!p)
		return NULL;
	p->ev_fd = -1;
	p->file_ino = ino;
	p->seen = true;
	if (ng_record_read(path, &p->d, &err) < 0) {
		ng_ops_log("error", "decision_unusable", NULL, "%s", err.msg);
		free(p);
		return NULL;
	}
	ng_podstate_from_record(&p->d, &p->vp);
	if (!enforced(p))
		return p;
	if (ng_record_policy(&p->d, &p->pol, &err) < 0) {
		snprintf(p->vp.read_error, sizeof(p->vp.read_error), "policy: %.150s", err.msg);
		ng_ops_log("error", "policy_unusable", p, "%s", err.msg);
		return p;
	}
	p->pol_ok = true;
	/* Memory per watched pod: the compiled policy stays, ADD's stdin goes
	 * (a repair reads the record again). */
	json_decref(p->d.conf);
	p->d.conf = NULL;
	rc = open_pod(p, &err);
	if (rc != 0) {
		snprintf(p->vp.read_error, sizeof(p->vp.read_error), "%.150s",
			 rc > 0 ? "the pod's network namespace is gone" : err.msg);
		if (rc < 0)
			ng_ops_log("error", "pod_unwatched", p, "%s", err.msg);
		return p;
	}
	/* A first CHECK at once: a change made before the socket existed
	 * sent its event to nobody. */
	p->check_now = true;
	p->next_collect_ms = 0;
	return p;
}

bool ng_ops_is_self(struct ng_ops *o, const struct ng_opod *p, bool node, uint32_t portid)
{
	bool self = false;

	if (portid == 0)
		return true; /* the kernel: timeouts, its own garbage collection */
	if (node)
		self = portid == o->node_nl.portid;
	else
		self = p->nl_open && portid == p->nl.portid;
	pthread_mutex_lock(&o->mu);
	if (node)
		self |= portid == o->agent_node_portid;
	else
		for (size_t i = 0; i < o->agent_pods.n && !self; i++)
			self = o->agent_pods.v[i].portid == portid &&
			       !strcmp(o->agent_pods.v[i].key, p->d.key);
	pthread_mutex_unlock(&o->mu);
	return self;
}

/* One of the pod's tables (on that side), by name and family? */
static bool pods_table(const struct ng_opod *p, bool node, const struct ng_nft_event *ev)
{
	for (size_t i = 0; i < p->d.tables.n; i++) {
		const struct ng_record_table *t = &p->d.tables.v[i];

		if (t->in_node == node && t->family == ev->family && !strcmp(t->name, ev->table))
			return true;
	}
	return false;
}

/* One drift event per pod and read: a `flush table` is thirty rule
 * deletions, one change to an operator. */
static void drift(struct ng_ops *o, struct ng_opod *p, bool node)
{
	const struct ng_nft_event *ev = &p->batch_first;
	char obj[80] = "";

	p->vp.drift_events++;
	o->local.drift_events++;
	o->dirty = true;
	if (ev->object[0])
		snprintf(obj, sizeof(obj), " (%s)", ev->object);
	ng_ops_log("warning", "drift", p, "%s side: %s in table %s %s%s by netlink port %u%s%u change(s))",
		   node ? "node" : "pod", ng_nft_event_what(ev->type),
		   ev->family == NFPROTO_NETDEV ? "netdev" : "inet", ev->table, obj, ev->portid, " (",
		   p->batch_n);
	p->batch_n = 0;
	p->check_now = true;
}

static struct ng_opod *pod_of_fd(struct ng_ops *o, int fd)
{
	for (size_t i = 0; i < o->pods.n; i++)
		if (o->pods.v[i]->ev_fd == fd)
			return o->pods.v[i];
	return NULL;
}

void ng_opod_events(struct ng_ops *o, int fd, bool node)
{
	char buf[65536] __attribute__((aligned(4)));
	struct ng_opod *owner = node ? NULL : pod_of_fd(o, fd);
	ssize_t n;

	if (!node && !owner)
		return;
	while ((n = ng_nl_recv_kernel(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == ENOBUFS) {
				/* Events were lost: look at everything this socket
				 * watches. */
				for (size_t i = 0; i < o->pods.n; i++)
					if (node || o->pods.v[i] == owner)
						o->pods.v[i]->check_now = true;
				continue;
			}
			break;
		}
		size_t left = (size_t)n;

		for (const struct nlmsghdr *h = (const struct nlmsghdr *)buf; ng_nlmsg_ok(h, left);
		     h = ng_nlmsg_next(h, &left)) {
			struct ng_nft_event ev;

			if (ng_nft_event_parse(h, &ev) < 0)
				continue;
			for (size_t i = 0; i < o->pods.n; i++) {
				struct ng_opod *p = o->pods.v[i];

				if ((!node && p != owner) || !enforced(p) || !pods_table(p, node, &ev) ||
				    ng_ops_is_self(o, p, node, ev.portid))
					continue;
				/* Name the change that matters most: a deleted table
				 * arrives as its rules' deletions first. */
				if (p->batch_n++ == 0 || ev.type == NFT_MSG_DELTABLE)
					p->batch_first = ev;
			}
		}
	}
	for (size_t i = 0; i < o->pods.n; i++)
		if (o->pods.v[i]->batch_n)
			drift(o, o->pods.v[i], node);
}

/* Re-applies the recorded policy in one transaction (the pod side: inet
 * and the packet-socket guard), then asks the main loop to re-commit what
 * it learned for the pod (the replaced table starts with empty name sets). */
static void repair(struct ng_ops *o, struct ng_opod *p)
{
	struct ng_record d;
	struct ng_err err = {0};
	char path[4600];
	int rc;

	/* The record again, from disk (the watch keeps only the compiled
	 * policy in memory); a DEL removes it before the table: no record, no
	 * repair. */
	snprintf(path, sizeof(path), "%s/" NG_PODS_DIR "/%s.json", o->state_dir, p->d.key);
	if (access(path, F_OK) < 0) {
		ng_ops_log("info", "repair_skipped", p, "the pod's decision record is gone (DEL)");
		return;
	}
	rc = ng_record_read(path, &d, &err);
	if (rc == 0 && strcmp(d.key, p->d.key) != 0)
		rc = ng_fail(&err, NG_E_DECODE, "decision record %s changed hands", path);
	if (rc == 0)
		rc = ng_podstate_repair(&p->nl, o->node_nl_open ? &o->node_nl : NULL, &d, &err);
	ng_record_free(&d);
	if (rc < 0) {
		p->vp.repair_errors++;
		o->local.repair_errors++;
		ng_ops_log("error", "repair_failed", p, "%s", err.msg);
		return;
	}
	p->vp.repairs++;
	o->local.repairs++;
	ng_ops_log("info", "repaired", p, "the recorded policy was re-applied (one transaction)");
	if (p->d.learn) {
		char *key = strdup(p->d.key);
		uint64_t one = 1;

		pthread_mutex_lock(&o->mu);
		if (key && ng_vec_push(&o->relearn, &key) < 0) {
			free(key);
			key = NULL;
		}
		pthread_mutex_unlock(&o->mu);
		if (key && write(o->relearn_fd, &one, sizeof(one)) < 0) {
			/* the counter is saturated: a wakeup is pending anyway */
		}
	}
}

void ng_opod_check(struct ng_ops *o, struct ng_opod *p, const char *why)
{
	char diff[256];
	bool was = p->vp.checked && !p->vp.in_sync;
	int rc;

	if (!p->nl_open || !p->pol_ok)
		return;
	rc = ng_podstate_check(&p->nl, o->node_nl_open ? &o->node_nl : NULL, &p->d, &p->pol, diff,
			       sizeof(diff));
	o->local.check_runs++;
	p->next_check_ms = ng_mono_ms() + o->cfg.check_ms;
	if (rc < 0) {
		snprintf(p->vp.read_error, sizeof(p->vp.read_error), "check: %.150s", diff);
		return;
	}
	p->vp.checked = true;
	p->vp.last_check_ms = ng_wall_ms();
	p->vp.in_sync = rc == 0;
	snprintf(p->vp.diff, sizeof(p->vp.diff), "%s", rc ? diff : "");
	o->dirty = true;
	if (rc == 0) {
		if (was)
			ng_ops_log("info", "in_sync", p, "the pod's tables match its recorded policy again");
		if (strcmp(why, "drift") != 0 || !o->cfg.repair)
			return;
	} else {
		/* A difference the periodic CHECK found first is drift too
		 * (no event told: missed, or made while we were not looking). */
		if (strcmp(why, "drift") != 0) {
			p->vp.drift_events++;
			o->local.drift_events++;
		}
		ng_ops_log("warning", "drift_check", p, "CHECK (%s): %s", why, diff);
		if (!o->cfg.repair)
			return;
	}
	repair(o, p);
	p->check_now = false;
	/* Confirm: the repair is itself checked at once. */
	rc = ng_podstate_check(&p->nl, o->node_nl_open ? &o->node_nl : NULL, &p->d, &p->pol, diff,
			       sizeof(diff));
	p->vp.in_sync = rc == 0;
	snprintf(p->vp.diff, sizeof(p->vp.diff), "%s", rc ? diff : "");
}

void ng_opod_collect(struct ng_ops *o, struct ng_opod *p)
{
	p->next_collect_ms = ng_mono_ms() + NG_OPS_COLLECT_MS;
	if (!p->nl_open)
		return;
	ng_podstate_read(&p->nl, o->node_nl_open ? &o->node_nl : NULL, &p->d, p->pol_ok ? &p->pol : NULL,
			 &p->vp);
	o->dirty = true;
}
