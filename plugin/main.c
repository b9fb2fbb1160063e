/* One binary: the CNI plugin when CNI_COMMAND is set (that is how runtimes
 * call it), otherwise a small command line for people on the node. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "cni/cni.h"
#include "spec/cniversion.h"
#include "install/help.h"
#include "install/install.h"
#include "node/cmd_logs.h"
#include "node/cmd_observe.h"
#include "node/cmd_stats.h"
#include "node/cmd_status.h"
#include "node/verify.h"
#include "base/version.h"

static int usage(FILE *f, int status)
{
	fprintf(f,
		"boxxkite-netguard %s: chained CNI plugin enforcing a default-deny\n"
		"nftables ruleset in each selected pod's network namespace.\n\n"
		"As a CNI plugin: invoked by the container runtime with CNI_COMMAND set.\n\n"
		"Commands:\n"
		"  version    print the version and the supported CNI versions\n"
		"  verify     check a live pod: table, policy, metadata refused, DNS, layer one\n"
		"  stats      a pod's deny counters, as JSON or Prometheus text (--prometheus)\n"
		"  logs       the packets a pod's tables refused, from its NFLOG group\n"
		"  observe    every refusal on this node, one line per packet (the flow log)\n"
		"  agent      the node agent: learns pods' DNS names from their own answers\n"
		"  status     every pod on this node: decision, tables, last check, denies, names\n",
		NG_VERSION);
	ng_install_usage(f);
	fprintf(f, "  help       this text\n\n"
		   "boxxkite-netguard COMMAND --help describes a command and its options.\n");
	return status;
}

int main(int argc, char **argv)
{
	const char *cmd = getenv("CNI_COMMAND");

	if (cmd && *cmd)
		return ng_cni_main(stdin, stdout);
	if (argc < 2)
		return usage(stderr, 2);
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("boxxkite-netguard %s (CNI %s)\n", NG_VERSION, ng_versions_text());
		return 0;
	}
	if (!strcmp(argv[1], "verify"))
		return ng_verify_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "stats"))
		return ng_stats_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "logs"))
		return ng_logs_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "observe"))
		return ng_observe_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "status"))
		return ng_status_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "agent"))
		return ng_agent_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "install"))
		return ng_install_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "uninstall"))
		return ng_uninstall_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return usage(stdout, 0);
	fprintf(stderr, "boxxkite-netguard: unknown command \"%s\"\n", argv[1]);
	return usage(stderr, 2);
}
