#include "node/verify_layer1.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "kernel/netns.h"
#include "kernel/netinfo.h"

static int read_links(void *data)
{
	struct ng_err err = {0};

	return ng_netinfo_read(data, &err);
}

void ng_verify_layer1(struct run *r)
{
	char path[64], links[300] = "";
	struct ng_netinfo ni;
	struct ng_err err = {0};
	bool only_lo = true;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", r->o->process);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ng_vrow(r, "layer 1: exec namespace", NG_FAIL, -1, "process %d: %s", r->o->process,
			strerror(errno));
		return;
	}
	if (ng_netns_same(path, r->target)) {
		close(fd);
		ng_vrow(r, "layer 1: exec namespace", NG_FAIL, -1,
			"process %d shares the pod's network namespace: layer one is absent for it",
			r->o->process);
		return;
	}
	if (ng_netns_is_node(path)) {
		close(fd);
		ng_vrow(r, "layer 1: exec namespace", NG_FAIL, -1,
			"process %d runs in the node's network namespace", r->o->process);
		return;
	}
	if (ng_netns_run(fd, read_links, &ni, &err) < 0) {
		close(fd);
		ng_vrow(r, "layer 1: exec namespace", NG_FAIL, -1, "%s", err.msg);
		return;
	}
	close(fd);
	for (size_t i = 0; i < ni.links.n; i++) {
		const struct ng_link *l = &ni.links.v[i];
		size_t o = strlen(links);

		only_lo &= l->loopback;
		snprintf(links + o, sizeof(links) - o, "%s%s (%s)", i ? ", " : "", l->name,
			 l->up ? "up" : "down");
	}
	if (only_lo)
		ng_vrow(r, "layer 1: exec namespace", NG_PASS, -1,
			"process %d has a network namespace of its own with only %s", r->o->process,
			ni.links.n ? links : "no interface");
	else
		ng_vrow(r, "layer 1: exec namespace", NG_FAIL, -1, "process %d can use: %s", r->o->process,
			links);
	ng_netinfo_free(&ni);
}
