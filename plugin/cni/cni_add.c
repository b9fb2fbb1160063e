/* ADD: both sides of the pod's ruleset, the agent's record, the pinned
 * gateways; a failed ADD leaves none of them. */
#include "cni/cni_add.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/kernelver.h"
#include "cni/hostmirror.h"
#include "kernel/neighpin.h"
#include "kernel/netns.h"
#include "kernel/resolve.h"
#include "state/policygen.h"
#include "state/ready.h"
#include "state/record.h"

/* The packet-socket guard needs the netdev egress hook as it is since
 * 5.17; an older kernel would leave packet sockets open without a word. */
static int guard_kernel(struct inv *v)
{
	struct utsname u = {.release = "(unknown)"};

	if (uname(&u) == 0 && ng_kernel_at_least(u.release, NG_RAW_GUARD_MAJOR, NG_RAW_GUARD_MINOR))
		return 0;
	return ng_fail(&v->err, NG_E_KERNEL,
		       "kernel %s is older than %d.%d: its netdev egress hook does not hold packet sockets "
		       "(rawPacketGuard); upgrade, or drop NET_RAW from sandbox pods and set rawPacketGuard "
		       "to false",
		       u.release, NG_RAW_GUARD_MAJOR, NG_RAW_GUARD_MINOR);
}

/* The record of an enforced pod, as far as ADD knows it before the tables
 * are built: its identity with its namespace's nsfs identity, ADD's stdin,
 * the link facts it planned with, the tables that will enforce it. */
static int prepare_record(struct inv *v)
{
	struct ng_record *r = &v->record;
	struct stat st;

	if (ng_record_key(v->container_id, v->ifname, r->key, sizeof(r->key), &v->err) < 0)
		return -1;
	if (stat(v->netns_path, &st) < 0)
		return ng_fail(&v->err, NG_E_NETNS, "CNI_NETNS %s: %s", v->netns_path, strerror(errno));
	r->pod.netns_dev = (uint64_t)st.st_dev;
	r->pod.netns_ino = (uint64_t)st.st_ino;
	r->learn = v->pod.policy.learn;
	r->audit = v->pod.policy.audit;
	/* Which policy generation the pod runs: the agent's current one when
	 * this entry is it (the agent re-plans a record of any other). */
	r->generation = ng_policygen_stamp(v->cfg.state_dir, v->root);
	snprintf(r->reason, sizeof(r->reason), "%.255s", v->pod.reason);
	if (!r->conf)
		r->conf = json_incref(v->root);
	if (ng_record_tables(&v->pod.policy, v->host_table, &r->tables) < 0)
		return ng_fail(&v->err, NG_E_INTERNAL, "out of memory");
	return 0;
}

/* A pod whose names the agent learns is recorded before its tables are
 * built, as "pending": the agent binds the pod's queue meanwhile, so
 * waiting for it afterwards costs next to nothing. So is a pod already
 * recorded (a retried ADD): its record changes before its tables do, and
 * the agent's drift watch never takes this ADD's commits for tampering. */
static int record_pending(struct inv *v)
{
	struct ng_record *r = &v->record;

	snprintf(r->decision, sizeof(r->decision), "pending");
	r->at_ms = ng_wall_ms();
	if (ng_record_new_nonce(r, &v->err) < 0 || ng_record_write(v->cfg.state_dir, r, true, &v->err) < 0)
		return -1;
	v->recorded = true;
	return 0;
}

/* A failed ADD leaves no record behind (the table is gone or never was). */
static int unrecord_fail(struct inv *v)
{
	if (v->recorded)
		ng_record_remove(v->cfg.state_dir, v->record.key, 0, NULL);
	return ng_inv_fail(v, "error");
}

/* Permanent neighbour entries for the gateways the node holds, so that a
 * neighbour poisoning the pod's ARP/ND cannot pose as the node (README
 * "Neighbours"). */
static int pin_gateways(struct inv *v)
{
	enum ng_netns_status st;
	size_t pinned = 0;
	int fd, rc;

	if (ng_netns_open(v->netns_path, &fd, &st, &v->err) < 0)
		return -1;
	rc = ng_neigh_pin_gateways(fd, v->pod.policy.ifname, v->prev.gateways.v, v->prev.gateways.n, &pinned,
				   &v->err);
	close(fd);
	ng_log_set(&v->log, "pinned_gateways", json_integer((json_int_t)pinned));
	return rc;
}

/* ADD resolves the policy's DNS names from the node's namespace (where the
 * plugin runs), within one budget for all of them. */
static int resolve_names(const ng_name_list *names, ng_resolved *out, void *ctx, struct ng_err *err)
{
	(void)ctx;
	return ng_resolve_all(names, ng_resolve_system, NG_RESOLVE_BUDGET_MS, out, err);
}

int ng_cmd_add(struct inv *v, FILE *in)
{
	json_int_t t_rec, t_wait;
	int rc;
	struct ng_nl nl;

	if (ng_inv_need_env(v, true) < 0)
		return ng_inv_fail(v, "error");
	if (ng_inv_load(v, in) < 0 || ng_inv_load_prev(v) < 0)
		return ng_inv_fail(v, "refused");
	if ((rc = ng_inv_decide(v, v->cfg.learn ? NULL : resolve_names)) != 0)
		return rc;
	if (!v->pod.enforced) {
		if (ng_inv_print_prev(v) < 0)
			return ng_inv_fail(v, "error");
		ng_log_emit(&v->log, "skipped", v->pod.reason, 0);
		return 0;
	}
	v->pod.policy.names_at = time(NULL); /* for the pinned name sets' expiry comments */
	if (v->pod.policy.raw_guard && guard_kernel(v) < 0)
		return ng_inv_fail(v, "error");

	if (ng_hostmirror_table(v->container_id, v->ifname, v->host_table, sizeof(v->host_table), &v->err) <
	    0)
		return ng_inv_fail(v, "error");
	/* Both sides planned first (the pod's link, its host peer), so the
	 * agent's record lists every table that enforces the pod. */
	if (ng_inv_open_pod_socket(v, &nl, true) < 0)
		return ng_inv_fail(v, v->err.code == NG_E_NO_HOST ? "refused" : "error");
	t_rec = (json_int_t)ng_mono_us();
	if (prepare_record(v) < 0 || ((v->pod.policy.learn || v->rerun) && record_pending(v) < 0)) {
		ng_nl_close(&nl);
		return ng_inv_fail(v, "error");
	}
	t_rec = (json_int_t)ng_mono_us() - t_rec;
	rc = ng_hostmirror_add(&nl, &v->pod.policy, v->host_table, &v->err);
	ng_nl_close(&nl);
	if (rc < 0) {
		if (v->err.code == NG_E_ATTACHED) {
			if (v->recorded)
				ng_record_remove(v->cfg.state_dir, v->record.key, 0, NULL);
			return ng_inv_fail(v, "refused");
		}
		return unrecord_fail(v);
	}
	t_wait = (json_int_t)ng_mono_us();
	if (v->pod.policy.learn && ng_record_wait_ready(v->cfg.state_dir, v->record.key, v->record.nonce,
							NG_AGENT_PICKUP_MS, &v->err) < 0) {
		/* No agent, no pod: leave neither side behind (answers would
		 * only be dropped), as any failed ADD does. */
		struct ng_err e2 = {0};
		const char *what = "";

		ng_hostmirror_del(v->netns_path, v->container_id, v->ifname, v->host_table, &v->log, &what,
				  &e2);
		return unrecord_fail(v);
	}
	t_wait = (json_int_t)ng_mono_us() - t_wait;
	if (pin_gateways(v) < 0) {
		struct ng_err e2 = {0};
		const char *what = "";

		ng_hostmirror_del(v->netns_path, v->container_id, v->ifname, v->host_table, &v->log, &what,
				  &e2);
		return unrecord_fail(v);
	}
	if (ng_inv_print_prev(v) < 0)
		return unrecord_fail(v);
	if (v->pod.policy.learn) { /* what the agent costs ADD (README "The node agent") */
		ng_log_set(&v->log, "agent_record_us", json_integer(t_rec));
		ng_log_set(&v->log, "agent_wait_us", json_integer(t_wait));
	}
	ng_log_set(&v->log, "allow_elements",
		   json_integer((json_int_t)v->pod.policy.allow[0].n + (json_int_t)v->pod.policy.allow[1].n));
	ng_log_set(&v->log, "name_elements",
		   json_integer((json_int_t)v->pod.policy.names[0].n + (json_int_t)v->pod.policy.names[1].n));
	/* Audit is never silent: the line says which mode the tables are in. */
	ng_log_set(&v->log, "mode", json_string(v->pod.policy.audit ? "audit" : "enforce"));
	ng_log_emit(&v->log, "enforced", v->pod.reason, 0);
	return 0;
}
