/* The agent's Kubernetes API options. See kubeopt.h. */
#include "agent/kubeopt.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/alog.h"

int ng_kubeopt_set(struct ng_kubeopt *o, int opt, const char *value)
{
	switch (opt) {
	case NG_KUBEOPT_API:
		if (strcmp(value, "off") != 0 && strncmp(value, "https://", 8) != 0)
			return -1;
		o->api = value;
		return 0;
	case NG_KUBEOPT_TOKEN: o->token = value; return value[0] == '/' ? 0 : -1;
	case NG_KUBEOPT_CA: o->ca = value; return value[0] == '/' ? 0 : -1;
	case NG_KUBEOPT_NODE: o->node = value; return value[0] ? 0 : -1;
	default: return -1;
	}
}

int ng_kubeopt_start(const struct ng_kubeopt *o, struct ng_kube **out)
{
	struct ng_kube_config c;
	struct ng_err err = {0};
	const char *node = o->node ? o->node : getenv("NODE_NAME");

	*out = NULL;
	memset(&c, 0, sizeof(c));
	if (o->api && !strcmp(o->api, "off"))
		return 0;
	if (!o->api) {
		if (ng_kapi_incluster(&c.api, &err) < 0)
			return 0; /* not in a cluster: grants are read at ADD only */
	} else {
		if (strlen(o->api) >= sizeof(c.api.url)) {
			ng_alog("error", "start", NULL, NULL, "--kube-api: too long");
			return -1;
		}
		snprintf(c.api.url, sizeof(c.api.url), "%s", o->api);
		snprintf(c.api.token, sizeof(c.api.token), "%s/token", NG_KAPI_SA_DIR);
		snprintf(c.api.ca, sizeof(c.api.ca), "%s/ca.crt", NG_KAPI_SA_DIR);
	}
	if (o->token)
		snprintf(c.api.token, sizeof(c.api.token), "%s", o->token);
	if (o->ca)
		snprintf(c.api.ca, sizeof(c.api.ca), "%s", o->ca);
	if (!node || !node[0] || strlen(node) >= sizeof(c.node)) {
		ng_alog("error", "start", NULL, NULL,
			"the Kubernetes API is configured (%s) but this node's name is not: --node-name or "
			"NODE_NAME (the downward API's spec.nodeName)",
			c.api.url);
		return -1;
	}
	snprintf(c.node, sizeof(c.node), "%s", node);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		ng_alog("error", "start", NULL, NULL, "libcurl cannot start");
		return -1;
	}
	if (ng_kube_start(&c, out, &err) < 0) {
		ng_alog("error", "start", NULL, NULL, "%s", err.msg);
		curl_global_cleanup();
		return -1;
	}
	ng_alog("info", "kube_start", NULL, NULL,
		"watching the pods of node %s at %s (grants follow their %s)", c.node, c.api.url,
		"netguard.boxxkite.io/egress annotation");
	return 0;
}

void ng_kubeopt_stop(struct ng_kube *k)
{
	if (!k)
		return;
	ng_kube_stop(k);
	curl_global_cleanup();
}
