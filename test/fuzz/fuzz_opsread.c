/* Fuzz target: what the agent's ops thread reads from others: the plugin's
 * invocation lines (a torn or hostile stateDir/invocations.log), nf_tables
 * event messages (any process in a pod's namespace can make them), the
 * pod records and the status file (status reads them). The first
 * byte picks the reader. */
#include <jansson.h>
#include <linux/netlink.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/nftevents.h"
#include "base/nlwalk.h"
#include "agent/invfold.h"
#include "state/record.h"
#include "node/statusjson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ng_err err = {0};

	if (size < 1)
		return 0;
	switch (data[0] % 4) {
	case 0: {
		struct ng_invfold f;
		struct ng_invtotals t;

		ng_invfold_init(&f);
		memset(&t, 0, sizeof(t));
		ng_invfold_feed(&f, (const char *)data + 1, size - 1, &t);
		break;
	}
	case 1: {
		/* As ng_nl_recv_kernel leaves it: NLMSG_ALIGNTO zero bytes after. */
		uint8_t *buf = calloc(1, size - 1 + NLMSG_ALIGNTO);
		size_t n = size - 1;
		struct ng_nft_event ev;

		if (!buf)
			return 0;
		memcpy(buf, data + 1, size - 1);
		/* Raw bytes through the agent's own walk (base/nlwalk.h). */
		for (const struct nlmsghdr *h = (const struct nlmsghdr *)buf; ng_nlmsg_ok(h, n);
		     h = ng_nlmsg_next(h, &n))
			ng_nft_event_parse(h, &ev);
		free(buf);
		break;
	}
	case 2:
	case 3: {
		json_t *o = json_loadb((const char *)data + 1, size - 1, JSON_REJECT_DUPLICATES, NULL);

		if (o && data[0] % 4 == 2) {
			struct ng_record r;

			if (ng_record_from_json(o, &r, &err) == 0)
				ng_record_free(&r);
		} else if (o) {
			struct ng_view v;

			if (ng_status_from_json(o, &v, &err) == 0)
				ng_view_free(&v);
		}
		json_decref(o);
		break;
	}
	}
	return 0;
}
