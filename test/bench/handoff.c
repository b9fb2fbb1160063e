/* What the operating hand-off adds to each plugin invocation (issue 15's
 * budget: 0.3 ms on ADD for all new work): ng_handoff for an enforced ADD
 * (decision record with the whole stdin + invocation line) and for a DEL,
 * with stateDir on tmpfs as on a node (/run), against stateDir absent.
 * Prints medians and p99 in microseconds; not a pass/fail test.
 *
 *   make bench-handoff     (or: build/bench/handoff [DIR] [N])         */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/decision_log.h"
#include "state/handoff.h"
#include "state/ready.h"
#include "state/record.h"

static const char *conf_text =
	"{\"cniVersion\":\"1.0.0\",\"name\":\"k8s\",\"type\":\"boxxkite-netguard\","
	"\"capabilities\":{\"io.kubernetes.cri.pod-annotations\":true},\"logFile\":\"/var/log/x.log\","
	"\"enforce\":{\"namespaces\":[\"sandboxes\"],\"optInAnnotation\":true},"
	"\"dns\":{\"servers\":[\"10.96.0.10\",\"fd00:10:96::a\"]},"
	"\"egress\":{\"allow\":[\"tcp://10.20.0.0/16:443\",\"s3.us-east-1.amazonaws.com:443\"],"
	"\"envelope\":[\"10.0.0.0/8:443\",\"*.amazonaws.com:443\"]},"
	"\"ingress\":{\"ports\":[8080],\"sources\":[\"10.244.0.0/16\"],\"allowNode\":true},"
	"\"runtimeConfig\":{\"io.kubernetes.cri.pod-annotations\":{\"netguard.boxxkite.io/egress\":"
	"\"s3.us-east-1.amazonaws.com:443\",\"kubernetes.io/config.seen\":\"2026-12-01T09:00:00Z\"}},"
	"\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"cni0\",\"mac\":\"aa:bb:cc:dd:"
	"ee:ff\"},"
	"{\"name\":\"veth1234\",\"mac\":\"aa:bb:cc:dd:ee:01\"},{\"name\":\"eth0\",\"mac\":\"aa:bb:cc:dd:ee:"
	"02\","
	"\"sandbox\":\"/var/run/netns/cni-1234\"}],\"ips\":[{\"address\":\"10.244.1.7/"
	"24\",\"gateway\":\"10.244.1.1\","
	"\"interface\":2},{\"address\":\"fd00:244:1::7/64\",\"gateway\":\"fd00:244:1::1\",\"interface\":2}],"
	"\"routes\":[{\"dst\":\"0.0.0.0/0\"},{\"dst\":\"::/0\"}],\"dns\":{}}}";

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void run(const char *label, const char *state_dir, const char *verb, const json_t *conf, int n)
{
	double *t = calloc((size_t)n, sizeof(*t));
	struct ng_record_table tab = {.family = 1, .name = "boxxkite_netguard"};
	char cid[80];

	for (int i = 0; i < n; i++) {
		struct ng_log log;
		struct ng_record r = {0};
		struct ng_err err = {0};
		struct ng_handoff h = {.state_dir = state_dir, .verb = verb, .log = &log, .record = &r};
		double t0;

		snprintf(cid, sizeof(cid), "c%06d", i % 100);
		ng_podref_set(&r.pod, "sandboxes", "s1", cid, "eth0", "/proc/self/ns/net", &err);
		ng_record_key(cid, "eth0", r.key, sizeof(r.key), &err);
		r.learn = true;
		r.conf = json_incref((json_t *)conf);
		ng_vec_push(&r.tables, &tab);
		ng_log_begin(&log, verb);
		snprintf(log.decision, sizeof(log.decision), "%s",
			 !strcmp(verb, "ADD") ? "enforced" : "deleted");
		snprintf(log.reason, sizeof(log.reason), "namespace sandboxes is in enforce.namespaces");
		t0 = now_us();
		if (!strcmp(verb, "DEL")) {
			h.record = NULL;
			ng_record_remove(state_dir, r.key, 0, &err);
		}
		ng_handoff(&h);
		t[i] = now_us() - t0;
		ng_record_free(&r);
	}
	qsort(t, (size_t)n, sizeof(*t), cmp);
	printf("%-40s median %7.1f us   p99 %7.1f us   (n=%d)\n", label, t[n / 2], t[n * 99 / 100], n);
	free(t);
}

int main(int argc, char **argv)
{
	char dir[256], missing[300], cmd[600];
	const char *base = argc > 1 ? argv[1] : "/dev/shm";
	int n = argc > 2 ? atoi(argv[2]) : 2000;
	json_error_t je;
	json_t *conf = json_loads(conf_text, 0, &je);

	snprintf(dir, sizeof(dir), "%s/ng-handoff-XXXXXX", base);
	if (!conf || !mkdtemp(dir))
		return 1;
	snprintf(missing, sizeof(missing), "%s/absent", dir);
	printf("stdin %zu bytes; stateDir %s\n", strlen(conf_text), dir);
	run("ADD enforced, stateDir absent", missing, "ADD", conf, n);
	run("ADD enforced, stateDir present", dir, "ADD", conf, n);
	run("DEL, stateDir present", dir, "DEL", NULL, n);
	run("CHECK (line only), stateDir present", dir, "CHECK", NULL, n);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	json_decref(conf);
	return system(cmd) == 0 ? 0 : 1;
}
