/* `boxxkite-netguard observe`: every refusal on the node (and every
 * would_deny an audited table let through), one line per packet, from the
 * agent's flow log (node-wide, with history), or on its own in one pod's
 * namespace when no agent serves (node/flowcli.h). */
#ifndef NG_CMD_OBSERVE_H
#define NG_CMD_OBSERVE_H

int ng_observe_main(int argc, char **argv);

#endif
