#include "install/help.h"

#include "state/confdir.h"
#include "install/install.h"

void ng_install_usage(FILE *f)
{
	fprintf(f, "  install    copy this binary into the CNI bin dir and merge the plugin entry\n"
		   "             into the node's active network config\n"
		   "  uninstall  remove the plugin entry, the installer's files and the binary\n");
}

void ng_install_help(FILE *f)
{
	fprintf(f, "usage: boxxkite-netguard install --entry FILE [--conf-dir DIR] [--bin-dir DIR]\n"
		   "         [--binary FILE] [--watch | --wait SECONDS | --dry-run]\n"
		   "\n"
		   "Copies this binary into the CNI bin dir (atomically) and merges the plugin\n"
		   "entry into the node's active network config, as containerd and CRI-O choose\n"
		   "it: the first .conf/.conflist/.json of the conf dir by name. A .conflist gets\n"
		   "the entry appended (its original bytes saved for uninstall); a single-plugin\n"
		   ".conf gets a generated conflist that sorts just before it. Writes nothing\n"
		   "when everything is in place already.\n"
		   "\n"
		   "  --entry FILE     the plugin entry, a JSON object (required); refused,\n"
		   "                   and nothing written, if the plugin would refuse it\n"
		   "  --conf-dir DIR   CNI config dir (default " NG_DEFAULT_CONF_DIR ")\n"
		   "  --bin-dir DIR    CNI bin dir (default " NG_DEFAULT_BIN_DIR "); refused if\n"
		   "                   anyone may write to it\n"
		   "  --binary FILE    the binary to install (default: this one)\n"
		   "  --watch          stay running; re-merge whenever the conf dir changes\n"
		   "                   (the primary CNI rewrote it) and once a minute\n"
		   "  --wait SECONDS   without --watch: wait this long for a network config\n"
		   "                   to appear (default 0: fail at once)\n"
		   "  --dry-run        print what would be written; change nothing\n"
		   "\n"
		   "Exit status: 0 installed (or already in place), 1 refused or failed, 2 usage.\n"
		   "Example: boxxkite-netguard install --dry-run --entry netguard.json \\\n"
		   "           --conf-dir ./copy-of-net.d --bin-dir \"$(mktemp -d)\"\n");
}

void ng_uninstall_help(FILE *f)
{
	fprintf(f, "usage: boxxkite-netguard uninstall [--conf-dir DIR] [--bin-dir DIR] [--dry-run]\n"
		   "\n"
		   "Removes the plugin from the node, config first: the plugin entry leaves the\n"
		   "active conflist (the primary's original file is restored byte for byte if\n"
		   "it has not changed since install), the conflists and side files the\n"
		   "installer generated are removed, then the binary (a config naming a missing\n"
		   "binary would fail every pod). Pods already running keep their tables.\n"
		   "\n"
		   "  --conf-dir DIR   CNI config dir (default " NG_DEFAULT_CONF_DIR ")\n"
		   "  --bin-dir DIR    CNI bin dir (default " NG_DEFAULT_BIN_DIR ")\n"
		   "  --dry-run        print what would be removed or rewritten; change nothing\n"
		   "\n"
		   "Stop `install --watch` first, or it puts the entry back.\n"
		   "Exit status: 0 removed (or nothing there), 1 failed, 2 usage.\n");
}
