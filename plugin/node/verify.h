/* `boxxkite-netguard verify`: the seed's manual checks as one command, run
 * on a node against a live pod. Each check is a row with a verdict; the
 * exit status is 0 only when no row failed or was ambiguous. */
#ifndef NG_VERIFY_H
#define NG_VERIFY_H

#include <stdbool.h>
#include <stdio.h>

#include "node/target.h"

struct ng_verify_opts {
	struct ng_target target; /* --netns PATH | --pid PID */
	const char *config;      /* --config FILE|DIR (default: /etc/cni/net.d if it has our entry) */
	const char *annotations; /* --annotations JSON */
	int process;             /* --process PID: layer one for an exec'd process */
	int sandbox_pid;         /* --sandbox-pid PID: the runtime's infra process, not counted */
	bool json;
	int timeout_ms;       /* per probe */
	const char *denied;   /* --denied-probe ADDR:PORT, outside the allowlist */
	const char *dns_name; /* the name DNS probes ask for */
};

enum ng_verdict { NG_PASS, NG_FAIL, NG_AMBIGUOUS, NG_SKIP, NG_INFO };

/* Runs the checks and prints them to `out`; returns the exit status
 * (0 all passed, 1 a check failed or was ambiguous, 2 usage/setup error). */
int ng_verify_run(const struct ng_verify_opts *o, FILE *out);

/* Parses the command line of `verify` and runs it. */
int ng_verify_main(int argc, char **argv);

#endif
