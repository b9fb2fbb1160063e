/* ngwiden: plays a process with CAP_NET_ADMIN in an enforced pod that
 * rewrites the plugin's tables with libnftnl (issue 13 item 1): the same
 * tables the plugin writes for this pod, to the byte, except that each name
 * set holds one element covering every address, 0.0.0.0/0 . tcp . 443 (and
 * ::/0 for IPv6). CHECK and verify must call that a difference.
 *
 *   ngwiden NETNS_PATH IFNAME POD_NS POD_NAME CONTAINER_ID < the plugin's stdin
 *
 * (the pod's identity as the runtime gave it, so the table comment is the
 * plugin's own).
 *
 * Prints "rewritten" and exits 0, or the error and 1. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cni/hostmirror.h"
#include "kernel/netns.h"
#include "kernel/nlcommit.h"
#include "kernel/nl_netns.h"
#include "nft/render.h"
#include "policy/pod_policy.h"

static int widen(struct ng_policy *p)
{
	for (int f = 0; f < 2; f++) {
		struct ng_elem e = {.proto = 6, .p_lo = 443, .p_hi = 443, .timeout = 3600};

		e.lo.fam = e.hi.fam = f == 0 ? NG_V4 : NG_V6;
		memset(e.hi.a, 0xff, f == 0 ? 4 : 16);
		p->names[f].n = 0;
		if (ng_vec_push(&p->names[f], &e) < 0)
			return -1;
	}
	p->names_at = time(NULL);
	return 0;
}

int main(int argc, char **argv)
{
	struct ng_err err = {0};
	struct ng_config cfg;
	struct ng_prev prev = {0};
	struct ng_pod_policy pp = {0};
	struct ng_podref id;
	struct ng_link_facts link;
	struct ng_batch b;
	struct ng_nl nl;
	struct ng_log log = {0};
	enum ng_netns_status st;
	json_error_t je;
	json_t *root;
	int fd = -1, rc = 1;

	char drift[256];

	if (argc != 6) {
		fprintf(stderr,
			"usage: ngwiden NETNS_PATH IFNAME POD_NS POD_NAME CONTAINER_ID < stdin.json\n");
		return 2;
	}
	root = json_loadf(stdin, 0, &je);
	if (!root || ng_podref_set(&id, argv[3], argv[4], argv[5], argv[2], argv[1], &err) < 0 ||
	    ng_config_parse(root, &cfg, &err) < 0 ||
	    ng_prev_parse(json_object_get(root, "prevResult"), &prev, &err) < 0 ||
	    ng_pod_policy_build(root, &cfg, &prev, &id, NULL, NULL, &pp, &err) < 0 || !pp.enforced ||
	    ng_netns_open(argv[1], &fd, &st, &err) < 0 || st != NG_NETNS_OK ||
	    /* the pod's link as ADD read it (link-local sources), so that the
	     * name sets are the only difference */
	    ng_hostmirror_plan(&cfg, fd, argv[2], json_object_get(root, "prevResult"), NULL, &pp.policy,
			       &link, drift, sizeof(drift), &log, &err) < 0 ||
	    widen(&pp.policy) < 0 || ng_batch_init(&b, NG_TABLE, 1, &err) < 0) {
		fprintf(stderr, "ngwiden: %s\n", root ? err.msg : je.text);
		return 1;
	}
	json_decref(log.extra);
	if (ng_render_replace(&pp.policy, &b, &err) == 0 && ng_nl_open_netns(fd, argv[2], &nl, &err) == 0) {
		rc = ng_nl_commit(&nl, &b, &err) == 0 ? 0 : 1;
		ng_nl_close(&nl);
	}
	if (fd >= 0)
		close(fd);
	puts(rc == 0 ? "rewritten" : err.msg);
	ng_batch_free(&b);
	ng_pod_policy_free(&pp);
	ng_prev_free(&prev);
	ng_config_free(&cfg);
	json_decref(root);
	return rc;
}
