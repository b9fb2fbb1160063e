/* `boxxkite-netguard status [--json] [--state-dir DIR]`: every pod on the
 * node in one table (node/statustable.h). Read-only: the agent's published
 * view (stateDir/status.json) when an agent serves and wrote it recently,
 * else the decision records read against the kernel right now. Exit 0; 3
 * when an enforced pod's tables are missing or differ; 1 on errors. */
#ifndef NG_CMD_STATUS_H
#define NG_CMD_STATUS_H

int ng_status_main(int argc, char **argv);

#endif
