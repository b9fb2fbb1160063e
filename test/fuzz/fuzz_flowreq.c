/* Fuzz target: what the agent reads on its local socket (node/flowreq.c:
 * one request line), and what `observe` and `status --names` read back
 * from the agent (a flow log line; a names document as a table). Root
 * alone reaches the socket; its parsers are held to the same standard. The
 * first byte picks the reader. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "node/flowev.h"
#include "node/flowreq.h"
#include "node/statusnames.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ng_err err = {0};
	json_t *j;

	if (size < 1)
		return 0;
	switch (data[0] % 3) {
	case 0: {
		struct ng_flow_req r;
		char line[NG_FLOW_REQ_MAX];

		if (ng_flow_req_parse((const char *)data + 1, size - 1, &r, &err) == 0 &&
		    ng_flow_req_line(&r, line, sizeof(line)) < 0)
			abort(); /* what parses writes back */
		break;
	}
	case 1: {
		struct ng_flow_ev ev;
		char line[1200];

		j = json_loadb((const char *)data + 1, size - 1, 0, NULL);
		if (j && ng_flowev_from_json(j, &ev, &err) == 0)
			ng_flowev_text(&ev, line, sizeof(line));
		json_decref(j);
		break;
	}
	default: {
		FILE *f = fopen("/dev/null", "w");

		j = json_loadb((const char *)data + 1, size - 1, 0, NULL);
		if (j && f)
			ng_status_names_table(j, f);
		if (f)
			fclose(f);
		json_decref(j);
		break;
	}
	}
	return 0;
}
