/* `boxxkite-netguard install` and `uninstall`: what the DaemonSet runs on
 * every node (deploy/). Copies this binary into the CNI bin dir, merges the
 * plugin entry into the active network config (installplan.h says how),
 * and with --watch keeps it merged while the primary CNI rewrites its
 * config (watch.h). One binary, so there is one thing to audit. */
#ifndef NG_INSTALL_H
#define NG_INSTALL_H

#define NG_DEFAULT_BIN_DIR "/opt/cni/bin"

int ng_install_main(int argc, char **argv);
int ng_uninstall_main(int argc, char **argv);

#endif
