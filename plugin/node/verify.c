#include "node/verify.h"

#include <getopt.h>
#include <jansson.h>
#include <string.h>
#include <unistd.h>

#include "base/cliarg.h"
#include "kernel/netns.h"
#include "kernel/nl.h"
#include "kernel/netinfo.h"
#include "node/target.h"
#include "node/verify_caps.h"
#include "node/verify_config.h"
#include "node/verify_dnsq.h"
#include "node/verify_host.h"
#include "node/verify_layer1.h"
#include "node/verify_probes.h"
#include "node/verify_report.h"
#include "node/verify_table.h"

#define DEFAULT_TIMEOUT_MS 2000
#define DEFAULT_DENIED     "192.0.2.1:443" /* TEST-NET-1 (RFC 5737): never anyone's allowlist */

/* Everything that runs inside the pod's namespace. */
static int inside_pod(void *data)
{
	struct run *r = data;
	struct ng_netinfo ni;
	struct ng_nl nl;
	struct ng_err err = {0};

	if (ng_nl_open(&nl, &err) < 0) {
		ng_vrow(r, "layer 2: table present", NG_FAIL, -1, "%s", err.msg);
		return 0;
	}
	if (ng_netinfo_read(&ni, &err) < 0)
		memset(&ni, 0, sizeof(ni));
	ng_verify_table(r, &nl, &ni);
	ng_verify_probe_metadata(r, &nl, &ni);
	ng_verify_probe_dns(r);
	ng_verify_dns_unlisted(r, &nl);
	ng_verify_probe_denied(r);
	ng_verify_counters(r, &nl);
	ng_netinfo_free(&ni);
	ng_nl_close(&nl);
	return 0;
}

int ng_verify_run(const struct ng_verify_opts *o, FILE *out)
{
	struct run r = {.o = o};
	struct ng_err err = {0};
	int fd, status;

	fd = ng_target_open(&o->target, r.target, sizeof(r.target));
	if (fd < 0)
		return 2;
	ng_verify_load_config(&r);
	if (ng_netns_run(fd, inside_pod, &r, &err) < 0)
		ng_vrow(&r, "enter the pod's namespace", NG_FAIL, -1, "%s", err.msg);
	ng_verify_host(&r, fd);
	ng_verify_capabilities(&r, fd);
	close(fd);
	if (o->process)
		ng_verify_layer1(&r);
	status = ng_verify_print(&r, out);
	ng_vec_free(&r.rows);
	ng_policy_free(&r.policy);
	ng_annotations_free(&r.ann);
	ng_config_free(&r.cfg);
	json_decref(r.cfg_json);
	return status;
}

static int usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: boxxkite-netguard verify (--netns PATH | --pid PID) [--config FILE|DIR]\n"
		"         [--annotations JSON] [--process PID] [--sandbox-pid PID] [--json] [--timeout MS]\n"
		"         [--denied-probe ADDR:PORT] [--dns-name NAME]\n\n"
		"Checks a live pod: its table is present and identical to what the config\n"
		"compiles to, and so is its host-side table in this (the node's) namespace,\n"
		"on the pod link's own peer; every cloud metadata address is refused at\n"
		"once; the DNS resolvers answer; an address outside the allowlist is\n"
		"refused. With\n"
		"--process, also checks that an exec'd process has a network namespace of\n"
		"its own with nothing but a loopback (layer one). --sandbox-pid names the\n"
		"runtime's infra process (crictl inspectp: .info.pid), which the capability\n"
		"check then does not count; no other process is ever exempt.\n"
		"Exit status: 0 all passed, 1 a check failed or was ambiguous, 2 usage.\n");
	return status;
}

int ng_verify_main(int argc, char **argv)
{
	static const struct option opts[] = {
		NG_TARGET_OPTIONS,
		{"config", required_argument, NULL, 'c'},
		{"annotations", required_argument, NULL, 'a'},
		{"process", required_argument, NULL, 'x'},
		{"sandbox-pid", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},
		{"timeout", required_argument, NULL, 't'},
		{"denied-probe", required_argument, NULL, 'd'},
		{"dns-name", required_argument, NULL, 'N'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct ng_verify_opts o = {.target = {.cmd = "verify"},
				   .timeout_ms = DEFAULT_TIMEOUT_MS,
				   .denied = DEFAULT_DENIED,
				   .dns_name = "."};
	long n = 0;
	int c;

	optind = 1;
	while ((c = ng_target_getopt(&o.target, argc, argv, opts)) != -1) {
		switch (c) {
		case NG_TARGET_BAD: return 2;
		case 'c': o.config = optarg; break;
		case 'a': o.annotations = optarg; break;
		case 'x':
			if (!ng_arg_long("verify", "process", optarg, 1, 0x7fffffff, &n))
				return 2;
			o.process = (int)n;
			break;
		case 's':
			if (!ng_arg_long("verify", "sandbox-pid", optarg, 1, 0x7fffffff, &n))
				return 2;
			o.sandbox_pid = (int)n;
			break;
		case 'j': o.json = true; break;
		case 't':
			if (!ng_arg_long("verify", "timeout", optarg, 1, 600000, &n))
				return 2;
			o.timeout_ms = (int)n;
			break;
		case 'd': o.denied = optarg; break;
		case 'N': o.dns_name = optarg; break;
		case 'h': return usage(0);
		default: return usage(2);
		}
	}
	if (optind != argc)
		return usage(2);
	return ng_verify_run(&o, stdout);
}
