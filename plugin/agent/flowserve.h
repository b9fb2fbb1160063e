/* The clients of the agent's local socket (stateDir/agent.sock): `observe`
 * streams and `status --names` requests, on the flow thread (agent/flow.h).
 * Each accepted peer must be root or the agent's own uid (the socket file
 * is 0600 too); at most NG_FLOW_CLIENTS at once, each with a request
 * deadline and its own bounded output (agent/flowclient.h), so a client
 * that stops reading holds up nobody. */
#ifndef NG_AGENT_FLOWSERVE_H
#define NG_AGENT_FLOWSERVE_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/flowclient.h"
#include "agent/flowring.h"
#include "node/flowev.h"

#define NG_FLOW_CLIENTS 16

/* The document a `names` request gets (the ops thread's view), or NULL. */
typedef json_t *(*ng_flow_names_fn)(void *data, const struct ng_flow_filter *f);

struct ng_flowserve {
	int epfd, listen_fd;      /* the flow thread's: clients are added to its epoll */
	int client_tag;           /* the epoll tag a client's events carry */
	pthread_mutex_t names_mu; /* held while a names document is built */
	ng_flow_names_fn names;
	void *names_data;
	struct ng_flowclient *clients[NG_FLOW_CLIENTS];
	size_t n_clients;
};

void ng_flowserve_init(struct ng_flowserve *s, int client_tag);
/* Every client disconnected (the listening socket is the caller's). */
void ng_flowserve_close(struct ng_flowserve *s);
void ng_flowserve_set_names(struct ng_flowserve *s, ng_flow_names_fn fn, void *data);

/* The listening socket is readable: every waiting peer accepted or refused. */
void ng_flowserve_accept(struct ng_flowserve *s);
/* A client's socket said something: its request (an observe stream starts
 * with start(start_data)'s line, then the ring), or that it is gone
 * (false: drop it). */
bool ng_flowserve_event(struct ng_flowserve *s, struct ng_flowclient *c, uint32_t events,
			struct ng_flowring *ring, char *(*start)(void *), void *start_data);
/* Every client: what the ring holds for it, written as far as it reads. */
void ng_flowserve_run(struct ng_flowserve *s, struct ng_flowring *ring, int64_t now);
void ng_flowserve_drop(struct ng_flowserve *s, struct ng_flowclient *c);

#endif
