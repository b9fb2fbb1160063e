/* What a client asks the agent on its local socket (kernel/unixsock.h):
 * one JSON line, the agent's answer after it.
 *
 *   {"op":"observe","pod":"NS/NAME","category":"egress","history":true,"since_ms":N,"follow":true}
 *      the flow log: the agent's ring from since_ms (unix ms; 0: all it
 *      holds) when history, then, with follow, every new line; one JSON
 *      object per line (node/flowev.h), first a "start" line
 *   {"op":"names","pod":"NS/NAME"}
 *      what each pod learned (node/statusnames.h): one JSON document
 *
 * Pure: built by the commands, parsed by the agent (fuzzed). */
#ifndef NG_FLOWREQ_H
#define NG_FLOWREQ_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "node/flowev.h"

#define NG_FLOW_REQ_MAX 4096 /* bytes of a request line, its newline included */

enum ng_flow_op { NG_FLOW_OP_OBSERVE, NG_FLOW_OP_NAMES };

struct ng_flow_req {
	enum ng_flow_op op;
	struct ng_flow_filter filter; /* pod and category (observe), pod (names) */
	bool history;                 /* replay what the ring holds since filter.since_ms */
	bool follow;                  /* then stream */
};

/* The request as one line, newline included; -1 when it does not fit. */
int ng_flow_req_line(const struct ng_flow_req *r, char *buf, size_t len);
/* One line (without its newline) into *r; -1 with err. */
int ng_flow_req_parse(const char *line, size_t len, struct ng_flow_req *r, struct ng_err *err);

#endif
