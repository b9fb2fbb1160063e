/* verify: Who in the pod's namespace could get around the ruleset. */
#ifndef NG_VERIFY_CAPS_H
#define NG_VERIFY_CAPS_H

#include "node/verify_report.h"

/* From the node: the processes of the pod's namespace (`nsfd`), what they
 * could do with their capabilities, and every packet, raw and XDP socket
 * of the namespace or held in it, with its holders (node/sockholders.h):
 * a held one fails the row whatever its holder's capabilities are now. */
void ng_verify_capabilities(struct run *r, int nsfd);

#endif
