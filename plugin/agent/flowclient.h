/* One client of the agent's local socket (agent/flow.h): its request
 * line, then its answer. An `observe` client is a cursor into the flow
 * ring (agent/flowring.h) and an output buffer of at most NG_FLOWCLIENT_OUT
 * bytes, refilled from the ring only as fast as the client reads: a slow
 * reader costs the flow thread nothing but its place in the ring, and
 * when the ring overwrites what it had not read it is told how many
 * events it missed ("dropped") and goes on. A `names` client gets one
 * document and the connection closes. Pure but for read() and write() on
 * the connection's fd. */
#ifndef NG_FLOWCLIENT_H
#define NG_FLOWCLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/flowring.h"
#include "node/flowreq.h"

#define NG_FLOWCLIENT_OUT    ((size_t)64 * 1024)
#define NG_FLOWCLIENT_REQ_MS 5000 /* the request line must come within this */

struct ng_flowclient {
	int tag; /* the flow thread's epoll tag (first member) */
	int fd;
	int64_t since_ms; /* mono: accepted */
	char req[NG_FLOW_REQ_MAX];
	size_t req_len;
	bool have_req;
	struct ng_flow_req r;
	struct ng_flowcursor cur;
	uint64_t end;     /* without follow: stop before this seq */
	uint64_t dropped; /* events this reader missed, in all */
	char *out;        /* what is to be written: out[off..len) */
	size_t len, off, cap;
	bool closing;  /* close once out is written */
	bool want_out; /* EPOLLOUT is asked for */
};

/* A client of connection fd (owned). NULL out of memory (fd closed). */
struct ng_flowclient *ng_flowclient_new(int fd, int tag, int64_t now_ms);
void ng_flowclient_free(struct ng_flowclient *c);

/* Reads what the connection has: 1 the request is complete (c->r), 0
 * wait, -1 close (gone, too long, malformed: an error line is queued and
 * closing set when it can still be told). */
int ng_flowclient_read_request(struct ng_flowclient *c);
/* Starts an observe answer: the start line (`start`, a JSON object
 * without newline, copied), the cursor placed. */
void ng_flowclient_start(struct ng_flowclient *c, const struct ng_flowring *ring, const char *start);
/* Queues raw bytes (a names document, an error line). -1 out of memory. */
int ng_flowclient_queue(struct ng_flowclient *c, const char *s, size_t n);
/* Renders what the ring holds for an observe client into its buffer,
 * up to NG_FLOWCLIENT_OUT; sets closing when it has all it asked for. */
void ng_flowclient_fill(struct ng_flowclient *c, const struct ng_flowring *ring, int64_t now_wall_ms);
/* Writes what it can: 1 all written (close if closing), 0 the socket is
 * full (ask for EPOLLOUT), -1 the client is gone. */
int ng_flowclient_flush(struct ng_flowclient *c);

#endif
