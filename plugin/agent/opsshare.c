/* The ops thread's shared halves. See opsshare.h. */
#include "agent/opsshare.h"

#include <stdlib.h>
#include <string.h>

#include "agent/metrics.h"
#include "node/statusnames.h"

void ng_opsshare_init(struct ng_opsshare *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->view_mu, NULL);
}

void ng_opsshare_free(struct ng_opsshare *s)
{
	ng_view_free(&s->view);
	ng_vec_free(&s->pods);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->view_mu);
}

void ng_opsshare_publish(struct ng_opsshare *s, bool serving, uint32_t node_portid,
			 const struct ng_ops_agent_pod *pods, size_t n, const uint64_t totals[NG_AC_COUNT])
{
	pthread_mutex_lock(&s->mu);
	s->serving = serving;
	s->node_portid = node_portid;
	s->pods.n = 0;
	for (size_t i = 0; i < n; i++)
		if (ng_vec_push(&s->pods, &pods[i]) < 0)
			break;
	memcpy(s->totals, totals, sizeof(s->totals));
	s->published = true;
	pthread_mutex_unlock(&s->mu);
}

bool ng_opsshare_owns(struct ng_opsshare *s, const char *key, bool node, uint32_t portid)
{
	bool own = false;

	pthread_mutex_lock(&s->mu);
	if (node)
		own = portid == s->node_portid;
	else
		for (size_t i = 0; i < s->pods.n && !own; i++)
			own = s->pods.v[i].portid == portid && !strcmp(s->pods.v[i].key, key);
	pthread_mutex_unlock(&s->mu);
	return own;
}

void ng_opsshare_learner(struct ng_opsshare *s, struct ng_opsview_learner *l)
{
	struct ng_ops_agent_pod *pods = NULL;

	memset(l, 0, sizeof(*l));
	pthread_mutex_lock(&s->mu);
	l->published = s->published;
	l->serving = s->serving;
	memcpy(l->totals, s->totals, sizeof(l->totals));
	if (s->pods.n && (pods = malloc(s->pods.n * sizeof(*pods)))) {
		memcpy(pods, s->pods.v, s->pods.n * sizeof(*pods));
		l->n = s->pods.n;
	}
	pthread_mutex_unlock(&s->mu);
	l->pods = pods;
}

void ng_opsshare_swap(struct ng_opsshare *s, struct ng_view *v)
{
	struct ng_view old;

	pthread_mutex_lock(&s->view_mu);
	old = s->view;
	s->view = *v;
	s->view_gen++;
	pthread_mutex_unlock(&s->view_mu);
	ng_view_free(&old);
}

uint64_t ng_opsshare_metrics(struct ng_opsshare *s, FILE *out)
{
	uint64_t gen;

	pthread_mutex_lock(&s->view_mu);
	ng_metrics_render(&s->view, out);
	gen = s->view_gen;
	pthread_mutex_unlock(&s->view_mu);
	return gen;
}

json_t *ng_opsshare_names(struct ng_opsshare *s, const char *ns, const char *name)
{
	json_t *doc;

	pthread_mutex_lock(&s->view_mu);
	doc = ng_status_names_json(&s->view, ns, name);
	pthread_mutex_unlock(&s->view_mu);
	return doc;
}

uint64_t ng_opsshare_gen(struct ng_opsshare *s)
{
	uint64_t gen;

	pthread_mutex_lock(&s->view_mu);
	gen = s->view_gen;
	pthread_mutex_unlock(&s->view_mu);
	return gen;
}

struct ng_ready ng_opsshare_ready(struct ng_opsshare *s)
{
	struct ng_ready r;

	pthread_mutex_lock(&s->view_mu);
	r = s->view.ready;
	pthread_mutex_unlock(&s->view_mu);
	/* The agent's own state as of now, not as of the last view. */
	pthread_mutex_lock(&s->mu);
	r.serving = s->serving;
	pthread_mutex_unlock(&s->mu);
	return r;
}
