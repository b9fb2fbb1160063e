/* The flow log on the command line (`observe`, `logs`): through the
 * agent's socket (node-wide, with history: node/flowreq.h), or on its own
 * in one pod's namespace (node/flowsrc.h: the pod's group, and its
 * host-side table's in the node's namespace when its record says it has
 * one). Prints one line per event, text or JSON. */
#ifndef NG_FLOWCLI_H
#define NG_FLOWCLI_H

#include <stdbool.h>

#include "node/flowev.h"

struct ng_flowcli {
	const char *cmd;       /* "observe", "logs": for messages */
	const char *state_dir; /* the records, the agent's socket */
	struct ng_flow_filter filter;
	bool json;
	bool follow;
	bool history;    /* --since given (or neither --since nor --follow) */
	bool legacy;     /* `logs`: JSON lines also carry the message's group and prefix */
	int netns_fd;    /* --netns / --pid: that namespace, on its own (-1: none) */
	int group;       /* --group, -1: the record's (else the default) */
	long count;      /* stop after this many refusals; 0: no bound */
	double duration; /* seconds; 0: until the stream ends or a signal */
};

/* Through the agent. 0 done; 1 could not; 3 no agent serves (*none). */
#define NG_FLOWCLI_NO_AGENT 3
int ng_flowcli_agent(const struct ng_flowcli *o);
/* On its own, in one pod's namespace (o->filter.pod, or o->netns_fd). 0
 * stopped as asked, 1 could not listen, 2 usage. */
int ng_flowcli_direct(const struct ng_flowcli *o);

#endif
