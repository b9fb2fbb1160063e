#include "nft/render_objs.h"
#include "node/cmd_stats.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernel/counters.h"
#include "kernel/netns.h"
#include "nft/render.h"
#include "nft/render_log.h"
#include "kernel/ruleset.h"
#include "node/target.h"
#include "policy/podcomment.h"

struct stats {
	ng_counter_vec counters;
	char comment[256];
	struct ng_podref pod;
	bool have_pod;
	uint64_t log_skipped; /* refusals the tables' log limit did not log */
	struct ng_err err;
	int rc;
};

/* Inside the pod: counters, and the table comment naming the pod. */
static int read_inside(void *data)
{
	struct stats *st = data;
	struct ng_snapshot snap = {.table = NG_TABLE};
	struct ng_nl nl;

	if (ng_nl_open(&nl, &st->err) < 0) {
		st->rc = -1;
		return 0;
	}
	st->rc = ng_counters_read(&nl, NG_TABLE, &st->counters, &st->err);
	/* The log limits' counters are no category of refusal: apart. */
	{
		size_t kept = 0;

		for (size_t i = 0; i < st->counters.n; i++) {
			if (ng_counter_is_log_skipped(st->counters.v[i].name))
				st->log_skipped += st->counters.v[i].packets;
			else
				st->counters.v[kept++] = st->counters.v[i];
		}
		st->counters.n = kept;
	}
	if (st->rc == 0 && ng_ruleset_snapshot(&nl, NG_TABLE, &snap, &st->err) == 0) {
		for (size_t i = 0; i < snap.lines.n; i++) {
			const char *c = strstr(snap.lines.v[i], " comment \"");

			if (strncmp(snap.lines.v[i], "table ", 6) != 0 || !c)
				continue;
			snprintf(st->comment, sizeof(st->comment), "%s", c + 10);
			if (*st->comment)
				st->comment[strlen(st->comment) - 1] = '\0';
			st->have_pod = ng_podref_from_comment(st->comment, &st->pod);
		}
	}
	ng_snapshot_free(&snap);
	ng_nl_close(&nl);
	return 0;
}

/* Prometheus label values escape backslash, quote and newline. */
static void label(FILE *out, const char *key, const char *v)
{
	fprintf(out, "%s=\"", key);
	for (; v && *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', out);
		if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
	fputc('"', out);
}

/* The agent's families and labels (agent/metrics.c), so that a pod's
 * series read here and scraped from the agent are the same series: the
 * pod's identity as pod_namespace/pod_name/sandbox_id (empty when the
 * table comment names none), the table's family, side "pod" (this
 * command reads the pod's namespace only), the category. */
static void print_prometheus(const struct stats *st, FILE *out)
{
	static const char *const kinds[4][2] = {
		{"boxxkite_netguard_denied_packets_total",
		 "Packets refused by a table that enforces the pod, by table, side and category."},
		{"boxxkite_netguard_denied_bytes_total",
		 "Bytes refused by a table that enforces the pod, by table, side and category."},
		{"boxxkite_netguard_would_deny_packets_total",
		 "Packets an audited table would refuse and let through, by table, side and category."},
		{"boxxkite_netguard_would_deny_bytes_total",
		 "Bytes an audited table would refuse and let through, by table, side and category."},
	};
	char sandbox[13];

	bool audited = false;

	snprintf(sandbox, sizeof(sandbox), "%.12s", st->have_pod ? st->pod.container_id : "");
	for (size_t i = 0; i < st->counters.n; i++) {
		char cat[64];
		bool would;

		ng_counter_category(st->counters.v[i].name, cat, sizeof(cat), &would);
		audited |= would;
	}
	/* The would_deny families only for an audited pod's table, as the JSON. */
	for (int k = 0; k < (audited ? 4 : 2); k++) {
		fprintf(out, "# HELP %s %s\n# TYPE %s counter\n", kinds[k][0], kinds[k][1], kinds[k][0]);
		for (size_t i = 0; i < st->counters.n; i++) {
			char cat[64];
			bool would;

			ng_counter_category(st->counters.v[i].name, cat, sizeof(cat), &would);
			if (would != (k >= 2))
				continue;
			fprintf(out, "%s{", kinds[k][0]);
			label(out, "pod_namespace", st->have_pod ? st->pod.ns : "");
			fputc(',', out);
			label(out, "pod_name", st->have_pod ? st->pod.name : "");
			fputc(',', out);
			label(out, "sandbox_id", sandbox);
			/* the guard's counter is raw_denied; the inet table's the others */
			fprintf(out, ",table=\"%s\",side=\"pod\",",
				strncmp(cat, "raw", 3) ? "inet" : "netdev");
			label(out, "category", cat);
			fprintf(out, "} %llu\n",
				(unsigned long long)(k % 2 ? st->counters.v[i].bytes
							   : st->counters.v[i].packets));
		}
	}
}

static void print_json(const struct stats *st, const char *netns, FILE *out)
{
	json_t *o = json_object(), *c = json_object(), *w = json_object();

	json_object_set_new(o, "netns", json_string(netns));
	if (st->have_pod) {
		json_object_set_new(o, "pod_namespace", json_string(st->pod.ns));
		json_object_set_new(o, "pod_name", json_string(st->pod.name));
	}
	for (size_t i = 0; i < st->counters.n; i++) {
		char cat[64];
		json_t *one = json_object();
		bool would;

		ng_counter_category(st->counters.v[i].name, cat, sizeof(cat), &would);
		json_object_set_new(one, "packets", json_integer((json_int_t)st->counters.v[i].packets));
		json_object_set_new(one, "bytes", json_integer((json_int_t)st->counters.v[i].bytes));
		json_object_set_new(would ? w : c, cat, one);
	}
	json_object_set_new(o, "denied", c);
	json_object_set_new(o, "log_skipped", json_integer((json_int_t)st->log_skipped));
	if (json_object_size(w)) /* an audited pod's: what it let through */
		json_object_set_new(o, "would_deny", w);
	else
		json_decref(w);
	json_dumpf(o, out, JSON_INDENT(2));
	fputc('\n', out);
	json_decref(o);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: boxxkite-netguard stats (--netns PATH | --pid PID) [--prometheus]\n"
		   "\n"
		   "Prints how many packets and bytes a pod's table denied, per category\n"
		   "(metadata, egress, ingress, ...), read from the table's counters.\n"
		   "\n"
		   "  --netns PATH    the pod's network namespace file (CNI_NETNS, e.g.\n"
		   "                  /run/netns/cni-...)\n"
		   "  --pid PID       or any process in the pod (its /proc/PID/ns/net)\n"
		   "  --prometheus    the Prometheus text format instead of JSON (this pod\n"
		   "                  only: two pods' outputs are not one valid scrape)\n"
		   "\n"
		   "Exit status: 0 printed, 1 the pod has no boxxkite-netguard table (not\n"
		   "enforced) or it cannot be read, 2 usage or no such namespace/process.\n"
		   "Needs root (CAP_SYS_ADMIN to enter the namespace, CAP_NET_ADMIN to read).\n"
		   "Example: boxxkite-netguard stats --pid \"$(pgrep -f my-sandbox | head -n1)\"\n");
}

int ng_stats_main(int argc, char **argv)
{
	static const struct option opts[] = {
		NG_TARGET_OPTIONS,
		{"prometheus", no_argument, NULL, 'P'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct ng_target t = {.cmd = "stats"};
	char path[4096];
	struct stats st = {0};
	bool prom = false;
	int c, fd;

	optind = 1;
	while ((c = ng_target_getopt(&t, argc, argv, opts)) != -1) {
		switch (c) {
		case NG_TARGET_BAD: return 2;
		case 'P': prom = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	fd = ng_target_open(&t, path, sizeof(path));
	if (fd < 0)
		return 2;
	if (ng_netns_run(fd, read_inside, &st, &st.err) < 0)
		st.rc = -1;
	close(fd);
	if (st.rc != 0) {
		fprintf(stderr, "boxxkite-netguard stats: %s\n",
			st.rc == -ENOENT ? "no boxxkite-netguard table in this namespace" : st.err.msg);
		ng_vec_free(&st.counters);
		return 1;
	}
	if (prom)
		print_prometheus(&st, stdout);
	else
		print_json(&st, path, stdout);
	ng_vec_free(&st.counters);
	return 0;
}
