/* `boxxkite-netguard logs`: one pod's refusals, one JSON line each, read
 * in its own namespace from its NFLOG group (log.nflogGroup): the per-pod
 * view of the flow log, over the same code as `observe` on its own
 * (node/flowcli.h), its lines `observe --json`'s plus the message's group
 * and prefix. */
#ifndef NG_LOGS_H
#define NG_LOGS_H

int ng_logs_main(int argc, char **argv);

#endif
