/* The agent's HTTP side, for the kubelet's probes and the node's scraper:
 * /healthz (the loop answers), /readyz and /metrics (the ops thread's last
 * view: agent/ops.h). A request is read briefly (the loop must get back
 * to the queues), answered, and the connection closed. */
#ifndef NG_AGENT_HTTP_H
#define NG_AGENT_HTTP_H

#include <stdbool.h>

#include "agent/ops.h"
#include "base/err.h"

/* A listening socket on ADDR:PORT ([v6]:PORT), or -1 with err. */
int ng_http_listen(const char *addr, struct ng_err *err);
/* Accepts one connection on listen_fd and answers it. */
void ng_http_serve(int listen_fd, bool serving, struct ng_ops *ops);

#endif
