/* `boxxkite-netguard logs`: prints the packets a pod's table denied, one JSON
 * line each, from its NFLOG group (config log.nflogGroup). nfnetlink_log
 * delivers a packet in the network namespace where it was logged, so a
 * reader must listen inside the pod's namespace: this command does. */
#ifndef NG_LOGS_H
#define NG_LOGS_H

int ng_logs_main(int argc, char **argv);

#endif
