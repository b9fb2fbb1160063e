/* The agent's options for the Kubernetes API (agent/kube.h), kept apart
 * from the loop's: --kube-api URL|off (default: in-cluster when
 * KUBERNETES_SERVICE_HOST is set, else off), --kube-token FILE,
 * --kube-ca FILE (default: the ServiceAccount's), --node-name NAME
 * (default: $NODE_NAME, from the downward API). */
#ifndef NG_AGENT_KUBEOPT_H
#define NG_AGENT_KUBEOPT_H

#include "agent/kube.h"

enum { NG_KUBEOPT_API = 0x1000, NG_KUBEOPT_TOKEN, NG_KUBEOPT_CA, NG_KUBEOPT_NODE };

#define NG_KUBEOPT_USAGE                                                                                    \
	"  --kube-api        the Kubernetes API (https://HOST:PORT) whose pod annotations grant\n"          \
	"                    per-session egress and which gets Events and the pod condition\n"              \
	"                    netguard.boxxkite.io/enforced (default: in-cluster when\n"                     \
	"                    KUBERNETES_SERVICE_HOST is set; off: none)\n"                                  \
	"  --kube-token      its bearer token file (default: the ServiceAccount's; re-read each request)\n" \
	"  --kube-ca         its CA bundle (default: the ServiceAccount's)\n"                               \
	"  --node-name       this node's name in the API (default: $NODE_NAME)\n"

struct ng_kubeopt {
	const char *api, *token, *ca, *node;
};

/* One option (`opt` one of the enum above); -1 when its value is wrong. */
int ng_kubeopt_set(struct ng_kubeopt *o, int opt, const char *value);
/* Starts the watch when the options or the environment ask for one:
 * *out NULL when off. -1 (logged) when asked for and impossible. */
int ng_kubeopt_start(const struct ng_kubeopt *o, struct ng_kube **out);
void ng_kubeopt_stop(struct ng_kube *k);

#endif
