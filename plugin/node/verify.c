#include "node/verify.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "policy/annotations.h"
#include "base/cliarg.h"
#include "cni/confdir.h"
#include "policy/config.h"
#include "kernel/counters.h"
#include "kernel/netinfo.h"
#include "kernel/netns.h"
#include "kernel/nl.h"
#include "policy/policy.h"
#include "node/probe.h"
#include "node/proccaps.h"
#include "nft/render.h"
#include "kernel/ruleset.h"
#include "policy/select.h"
#include "nft/snapshot.h"

#define DEFAULT_TIMEOUT_MS 2000
#define DEFAULT_DENIED     "192.0.2.1:443" /* TEST-NET-1 (RFC 5737): never anyone's allowlist */
#define METADATA_PORT      80

struct row {
	char check[96];
	enum ng_verdict verdict;
	char detail[400];
	double ms; /* < 0: not timed */
};

struct run {
	const struct ng_verify_opts *o;
	NG_VEC(struct row) rows;
	char target[4096];
	char pod[256]; /* "ns/name" from the table comment */
	struct ng_config cfg;
	bool have_cfg;
	char cfg_path[4096];
	json_t *cfg_json;
	struct ng_annotations ann;
};

static const char *verdict_name(enum ng_verdict v)
{
	static const char *const names[] = {"PASS", "FAIL", "AMBIGUOUS", "SKIP", "INFO"};

	return names[v];
}

static void row(struct run *r, const char *check, enum ng_verdict v, double ms, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void row(struct run *r, const char *check, enum ng_verdict v, double ms, const char *fmt, ...)
{
	struct row x = {.verdict = v, .ms = ms};
	va_list ap;

	snprintf(x.check, sizeof(x.check), "%s", check);
	va_start(ap, fmt);
	vsnprintf(x.detail, sizeof(x.detail), fmt, ap);
	va_end(ap);
	if (ng_vec_push(&r->rows, &x) < 0)
		abort(); /* a CLI out of memory has nothing better to do */
}

/* ---- configuration ------------------------------------------------------- */

/* Loads --config (or the node's active conflist when it holds our entry)
 * and --annotations. Without a config the policy comparison and the DNS
 * probes are skipped, and the built-in metadata list is probed. */
static int load_config(struct run *r)
{
	struct ng_err err = {0};
	const char *path = r->o->config;
	bool explicit = path != NULL;

	if (!path)
		path = NG_DEFAULT_CONF_DIR;
	/* Until a config parses, probe the built-in metadata list. */
	ng_config_builtin_metadata(&r->cfg, &err);
	r->cfg_json = ng_conffile_entry(path, r->cfg_path, sizeof(r->cfg_path), &err);
	if (!r->cfg_json) {
		if (explicit) {
			row(r, "configuration", NG_FAIL, -1, "%s", err.msg);
			return -1;
		}
		row(r, "configuration", NG_SKIP, -1,
		    "no --config and no %s entry in %s: the policy is not compared", NG_PLUGIN_TYPE,
		    NG_DEFAULT_CONF_DIR);
		return 0;
	}
	if (!json_object_get(r->cfg_json, "cniVersion"))
		json_object_set_new(r->cfg_json, "cniVersion", json_string("1.1.0"));
	if (r->o->annotations) {
		json_error_t je;
		json_t *ann = json_loads(r->o->annotations, 0, &je), *rc = json_object();

		if (!ann) {
			json_decref(rc);
			row(r, "annotations", NG_FAIL, -1, "--annotations is not JSON: %s", je.text);
			return -1;
		}
		json_object_set_new(rc, NG_ANNOTATIONS_CAP, ann);
		json_object_set_new(r->cfg_json, "runtimeConfig", rc);
	}
	ng_config_free(&r->cfg);
	if (ng_config_parse(r->cfg_json, &r->cfg, &err) < 0 ||
	    ng_annotations_parse(r->cfg_json, &r->cfg, &r->ann, &err) < 0) {
		row(r, "configuration", NG_FAIL, -1, "%s: %s", r->cfg_path, err.msg);
		ng_config_free(&r->cfg);
		memset(&r->cfg, 0, sizeof(r->cfg));
		ng_config_builtin_metadata(&r->cfg, &err);
		return -1;
	}
	r->have_cfg = true;
	row(r, "configuration", NG_INFO, -1, "%s", r->cfg_path);
	return 0;
}

/* ---- layer two: the table ------------------------------------------------ */

/* Reads the pod identity out of the table comment line of a snapshot. */
static bool pod_from_snapshot(const struct ng_snapshot *s, char *buf, size_t len, struct ng_pod_id *id)
{
	for (size_t i = 0; i < s->lines.n; i++) {
		const char *l = s->lines.v[i], *c = strstr(l, " comment \"");

		if (strncmp(l, "table ", 6) != 0 || !c)
			continue;
		snprintf(buf, len, "%s", c + 10);
		if (*buf)
			buf[strlen(buf) - 1] = '\0'; /* closing quote */
		return ng_pod_id_from_comment(buf, id);
	}
	return false;
}

static void check_table(struct run *r, struct ng_nl *nl, const struct ng_netinfo *ni)
{
	struct ng_snapshot have = {.table = NG_TABLE};
	struct ng_policy pol;
	struct ng_pod_id id = {0};
	struct ng_err err = {0};
	size_t objects = 0;
	char comment[256], reason[512];
	bool enforced = true;
	int rc;

	rc = ng_ruleset_snapshot(nl, NG_TABLE, &have, &err);
	if (rc == -ENOENT) {
		row(r, "layer 2: table present", NG_FAIL, -1,
		    "no table inet %s in this namespace: the pod is not protected by netguard", NG_TABLE);
		ng_snapshot_free(&have);
		return;
	}
	if (rc < 0) {
		row(r, "layer 2: table present", NG_FAIL, -1, "%s", err.msg);
		ng_snapshot_free(&have);
		return;
	}
	if (pod_from_snapshot(&have, comment, sizeof(comment), &id))
		snprintf(r->pod, sizeof(r->pod), "%s/%s", id.ns ? id.ns : "-", id.name ? id.name : "-");
	row(r, "layer 2: table present", NG_PASS, -1, "table inet %s%s%s", NG_TABLE,
	    r->pod[0] ? ", pod " : "", r->pod);

	if (!r->have_cfg) {
		row(r, "layer 2: rules match policy", NG_SKIP, -1, "no configuration to compare with");
		goto out;
	}
	/* The pod's selection, as the plugin would decide it. */
	if (ng_select(&r->cfg, id.ns, &r->ann, &enforced, reason, sizeof(reason), &err) < 0 || !enforced) {
		row(r, "layer 2: rules match policy", NG_FAIL, -1,
		    "the configuration does not enforce this pod: %s", enforced ? err.msg : reason);
		goto out;
	}
	/* prevResult rebuilt from the namespace itself: its addresses and the
	 * gateways of its default routes; the guard's interface is the pod's
	 * first one other than loopback. */
	for (size_t i = 0; i < ni->links.n && !id.ifname; i++)
		if (!ni->links.v[i].loopback)
			id.ifname = ni->links.v[i].name;
	if (ng_policy_compile(&r->cfg, &r->ann, &ni->prev, NULL, &id, &pol, &err) < 0) {
		row(r, "layer 2: rules match policy", NG_FAIL, -1, "%s", err.msg);
		goto out;
	}
	/* The same comparison as CHECK, both tables. */
	rc = ng_ruleset_check(nl, &pol, NG_TABLE, &objects, &err);
	if (rc == 0)
		row(r, "layer 2: rules match policy", NG_PASS, -1,
		    "identical to what %s compiles to (%zu objects)", r->cfg_path, objects);
	else
		row(r, "layer 2: rules match policy", NG_FAIL, -1, "%s", err.msg);
	ng_policy_free(&pol);
out:
	ng_snapshot_free(&have);
}

/* ---- live probes ----------------------------------------------------------- */

static uint64_t counter_packets(struct ng_nl *nl, const char *name)
{
	ng_counter_vec v = {0};
	struct ng_err err = {0};
	const struct ng_counter *c;
	uint64_t n = 0;

	if (ng_counters_read(nl, NG_TABLE, &v, &err) == 0 && (c = ng_counter_find(&v, name)))
		n = c->packets;
	ng_vec_free(&v);
	return n;
}

/* The pod's first interface other than loopback: the scope for probing an
 * IPv6 link-local endpoint (fe80::a9fe:a9fe). */
static unsigned pod_ifindex(const struct ng_netinfo *ni)
{
	for (size_t i = 0; i < ni->links.n; i++)
		if (!ni->links.v[i].loopback)
			return (unsigned)ni->links.v[i].ifindex;
	return 0;
}

static bool link_local(const struct ng_ip *ip)
{
	return ip->fam == NG_V6 && ip->a[0] == 0xfe && (ip->a[1] & 0xc0) == 0x80;
}

static void probe_metadata(struct run *r, struct ng_nl *nl, const struct ng_netinfo *ni)
{
	for (size_t i = 0; i < r->cfg.metadata.n; i++) {
		const struct ng_ip *ip = &r->cfg.metadata.v[i];
		uint64_t before = counter_packets(nl, NG_COUNTER_METADATA), after;
		uint64_t eg_before = counter_packets(nl, NG_COUNTER_EGRESS), eg_after;
		char addr[NG_IP_STRLEN], check[96];
		struct ng_probe p;

		ng_ip_format(ip, addr, sizeof(addr));
		snprintf(check, sizeof(check), ip->fam == NG_V4 ? "metadata %s:%d" : "metadata [%s]:%d", addr,
			 METADATA_PORT);
		if (link_local(ip) && !pod_ifindex(ni)) {
			row(r, check, NG_SKIP, -1, "no interface to scope a link-local address to");
			continue;
		}
		ng_probe_tcp(ip, METADATA_PORT, link_local(ip) ? pod_ifindex(ni) : 0, r->o->timeout_ms, &p);
		after = counter_packets(nl, NG_COUNTER_METADATA);
		eg_after = counter_packets(nl, NG_COUNTER_EGRESS);
		switch (p.result) {
		case NG_PROBE_REFUSED:
			row(r, check, NG_PASS, p.ms, "refused in %.2f ms%s", p.ms,
			    after > before ? " (metadata_denied +1: by netguard)"
			    : eg_after > eg_before
				    ? " (egress_denied +1: netguard's default deny, not its metadata rule)"
				    : " (not by a netguard counter)");
			break;
		case NG_PROBE_UNREACHABLE:
			row(r, check, NG_PASS, p.ms, "unreachable in %.2f ms (%s)", p.ms, strerror(p.err));
			break;
		case NG_PROBE_TIMEOUT:
			row(r, check, NG_AMBIGUOUS, p.ms,
			    "no answer in %d ms: dropped somewhere, or slow; a refusal should be immediate",
			    r->o->timeout_ms);
			break;
		case NG_PROBE_CONNECTED:
			row(r, check, NG_FAIL, p.ms,
			    "CONNECTED in %.2f ms: the metadata endpoint is reachable", p.ms);
			break;
		case NG_PROBE_ERROR: row(r, check, NG_FAIL, p.ms, "probe error: %s", strerror(p.err)); break;
		}
	}
}

static const char *rcode_name(unsigned rcode)
{
	static const char *const names[] = {"NOERROR",  "FORMERR", "SERVFAIL",
					    "NXDOMAIN", "NOTIMP",  "REFUSED"};

	return rcode < 6 ? names[rcode] : "other";
}

static void probe_dns(struct run *r)
{
	if (!r->have_cfg || r->cfg.dns.n == 0) {
		row(r, "dns", NG_SKIP, -1, r->have_cfg ? "no dns.servers configured" : "no configuration");
		return;
	}
	for (size_t i = 0; i < r->cfg.dns.n; i++) {
		for (int tcp = 0; tcp < 2; tcp++) {
			struct ng_probe p;
			char addr[NG_IP_STRLEN], check[96];

			ng_ip_format(&r->cfg.dns.v[i], addr, sizeof(addr));
			snprintf(check, sizeof(check), "dns %s (%s)", addr, tcp ? "tcp" : "udp");
			ng_probe_dns(&r->cfg.dns.v[i], tcp, r->o->dns_name, r->o->timeout_ms, &p);
			if (p.result == NG_PROBE_CONNECTED)
				row(r, check, NG_PASS, p.ms, "answered in %.2f ms (rcode %s)", p.ms,
				    rcode_name(p.rcode));
			else
				row(r, check, NG_FAIL, p.ms, "%s after %.2f ms%s%s",
				    ng_probe_result_name(p.result), p.ms, p.err ? ": " : "",
				    p.err ? strerror(p.err) : "");
		}
	}
}

static int parse_hostport(const char *s, struct ng_ip *ip, uint16_t *port)
{
	char host[NG_IP_STRLEN];
	const char *colon = strrchr(s, ':');
	long p;

	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return -1;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	p = strtol(colon + 1, NULL, 10);
	if (ng_ip_parse(host, ip) < 0 || p < 1 || p > 65535)
		return -1;
	*port = (uint16_t)p;
	return 0;
}

static void probe_denied(struct run *r)
{
	struct ng_ip ip;
	uint16_t port;
	struct ng_probe p;
	bool drop = r->have_cfg && r->cfg.deny == NG_DENY_DROP;
	char check[96];

	if (parse_hostport(r->o->denied, &ip, &port) < 0) {
		row(r, "egress outside allowlist", NG_FAIL, -1, "--denied-probe %s: want ADDR:PORT",
		    r->o->denied);
		return;
	}
	snprintf(check, sizeof(check), "egress to %.60s", r->o->denied);
	ng_probe_tcp(&ip, port, 0, r->o->timeout_ms, &p);
	switch (p.result) {
	case NG_PROBE_REFUSED: row(r, check, NG_PASS, p.ms, "refused in %.2f ms", p.ms); break;
	case NG_PROBE_UNREACHABLE:
		row(r, check, NG_PASS, p.ms, "unreachable in %.2f ms (%s)", p.ms, strerror(p.err));
		break;
	case NG_PROBE_TIMEOUT:
		row(r, check, drop ? NG_PASS : NG_AMBIGUOUS, p.ms, "no answer in %d ms%s", r->o->timeout_ms,
		    drop ? " (denyAction is drop)" : "");
		break;
	default:
		row(r, check, NG_FAIL, p.ms, "%s in %.2f ms: outside the allowlist, yet not refused",
		    ng_probe_result_name(p.result), p.ms);
	}
}

static void report_counters(struct run *r, struct ng_nl *nl)
{
	ng_counter_vec v = {0};
	struct ng_err err = {0};
	char detail[400] = "";

	if (ng_counters_read(nl, NG_TABLE, &v, &err) < 0) {
		row(r, "deny counters", NG_SKIP, -1, "no counters to read");
		return;
	}
	for (size_t i = 0; i < v.n; i++) {
		size_t o = strlen(detail);

		snprintf(detail + o, sizeof(detail) - o, "%s%s %llu packets", i ? ", " : "", v.v[i].name,
			 (unsigned long long)v.v[i].packets);
	}
	row(r, "deny counters", NG_INFO, -1, "%s", detail);
	ng_vec_free(&v);
}

/* Everything that runs inside the pod's namespace. */
static int inside_pod(void *data)
{
	struct run *r = data;
	struct ng_netinfo ni;
	struct ng_nl nl;
	struct ng_err err = {0};

	if (ng_nl_open(&nl, &err) < 0) {
		row(r, "layer 2: table present", NG_FAIL, -1, "%s", err.msg);
		return 0;
	}
	if (ng_netinfo_read(&ni, &err) < 0)
		memset(&ni, 0, sizeof(ni));
	check_table(r, &nl, &ni);
	probe_metadata(r, &nl, &ni);
	probe_dns(r);
	probe_denied(r);
	report_counters(r, &nl);
	ng_netinfo_free(&ni);
	ng_nl_close(&nl);
	return 0;
}

/* ---- layer one: an exec's own namespace ----------------------------------- */

static int read_links(void *data)
{
	struct ng_err err = {0};

	return ng_netinfo_read(data, &err);
}

static bool same_file(const char *a, const char *b)
{
	struct stat x, y;

	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static void check_process(struct run *r)
{
	char path[64], links[300] = "";
	struct ng_netinfo ni;
	struct ng_err err = {0};
	bool only_lo = true;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", r->o->process);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		row(r, "layer 1: exec namespace", NG_FAIL, -1, "process %d: %s", r->o->process,
		    strerror(errno));
		return;
	}
	if (same_file(path, r->target)) {
		close(fd);
		row(r, "layer 1: exec namespace", NG_FAIL, -1,
		    "process %d shares the pod's network namespace: layer one is absent for it",
		    r->o->process);
		return;
	}
	if (same_file(path, "/proc/1/ns/net") || same_file(path, "/proc/self/ns/net")) {
		close(fd);
		row(r, "layer 1: exec namespace", NG_FAIL, -1,
		    "process %d runs in the node's network namespace", r->o->process);
		return;
	}
	if (ng_netns_run(fd, read_links, &ni, &err) < 0) {
		close(fd);
		row(r, "layer 1: exec namespace", NG_FAIL, -1, "%s", err.msg);
		return;
	}
	close(fd);
	for (size_t i = 0; i < ni.links.n; i++) {
		const struct ng_link *l = &ni.links.v[i];
		size_t o = strlen(links);

		only_lo &= l->loopback;
		snprintf(links + o, sizeof(links) - o, "%s%s (%s)", i ? ", " : "", l->name,
			 l->up ? "up" : "down");
	}
	if (only_lo)
		row(r, "layer 1: exec namespace", NG_PASS, -1,
		    "process %d has a network namespace of its own with only %s", r->o->process,
		    ni.links.n ? links : "no interface");
	else
		row(r, "layer 1: exec namespace", NG_FAIL, -1, "process %d can use: %s", r->o->process,
		    links);
	ng_netinfo_free(&ni);
}

/* ---- who could get around the ruleset ----------------------------------------- */

/* Reads /proc/PID/`file` into buf (NUL-terminated); -1 if gone. */
static int read_proc(int pid, const char *file, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* Every process whose network namespace is `ns` (same device and inode). */
static int procs_in(const struct stat *ns, ng_proc_vec *out)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	char status[4096], stat_text[1024];

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		struct ng_proc p = {0};
		struct stat st;
		char path[64];
		char *end;

		p.pid = (int)strtol(de->d_name, &end, 10);
		if (*end || p.pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/ns/net", p.pid);
		if (stat(path, &st) < 0 || st.st_dev != ns->st_dev || st.st_ino != ns->st_ino)
			continue;
		/* Gone in between: not there to worry about. Unreadable: a
		 * row that cannot be judged must not pass. */
		if (read_proc(p.pid, "status", status, sizeof(status)) < 0 ||
		    read_proc(p.pid, "stat", stat_text, sizeof(stat_text)) < 0)
			continue;
		if (ng_proc_parse_status(status, &p) < 0 || ng_proc_parse_start(stat_text, &p.start) < 0) {
			closedir(d);
			errno = EPROTO;
			return -1;
		}
		if (ng_vec_push(out, &p) < 0) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

static void check_capabilities(struct run *r, const struct stat *ns)
{
	static const char *check = "layer 2: no process can bypass it";
	ng_proc_vec v = {0};
	char now[300] = "", by_exec[300] = "", infra[96] = "";
	long inf;
	size_t checked = 0;

	if (procs_in(ns, &v) < 0) {
		row(r, check, NG_FAIL, -1, "cannot read the processes of the namespace: %s", strerror(errno));
		ng_vec_free(&v);
		return;
	}
	inf = ng_proc_infra(v.v, v.n);
	if (inf >= 0 && v.v)
		snprintf(infra, sizeof(infra), "; not counted: %d (pause, the oldest: the infra container)",
			 v.v[inf].pid);
	for (size_t i = 0; i < v.n; i++) {
		const struct ng_proc *p = &v.v[i];
		enum ng_cap_reach raw = ng_proc_cap_reach(p, NG_CAP_NET_RAW),
				  admin = ng_proc_cap_reach(p, NG_CAP_NET_ADMIN);
		char *dst;
		size_t o;

		if ((long)i == inf)
			continue;
		checked++;
		if (raw == NG_CAP_NO && admin == NG_CAP_NO)
			continue;
		dst = raw == NG_CAP_NOW || admin == NG_CAP_NOW ? now : by_exec;
		o = strlen(dst);
		snprintf(dst + o, sizeof(now) - o, "%s%d (%s: %s%s%s)", o ? ", " : "", p->pid, p->name,
			 raw != NG_CAP_NO ? "NET_RAW" : "",
			 raw != NG_CAP_NO && admin != NG_CAP_NO ? ", " : "",
			 admin != NG_CAP_NO ? "NET_ADMIN" : "");
	}
	if (*now)
		row(r, check, NG_FAIL, -1,
		    "can use them now: %s. NET_RAW: AF_XDP frames pass no hook in the pod; NET_ADMIN: can "
		    "delete the tables. Drop both%s",
		    now, infra);
	else if (*by_exec)
		row(r, check, NG_AMBIGUOUS, -1,
		    "could gain them by running a setuid or file-capability binary (no_new_privs is off): "
		    "%s; "
		    "set allowPrivilegeEscalation: false or drop both%s",
		    by_exec, infra);
	else
		row(r, check, NG_PASS, -1,
		    "%zu process%s in the namespace, none can use NET_RAW or NET_ADMIN%s", checked,
		    checked == 1 ? "" : "es", infra);
	ng_vec_free(&v);
}

/* ---- output ------------------------------------------------------------------ */

static int print(const struct run *r, FILE *out)
{
	bool ok = true;

	for (size_t i = 0; i < r->rows.n; i++)
		ok &= r->rows.v[i].verdict != NG_FAIL && r->rows.v[i].verdict != NG_AMBIGUOUS;
	if (r->o->json) {
		json_t *o = json_object(), *rows = json_array();

		json_object_set_new(o, "netns", json_string(r->target));
		if (r->pod[0])
			json_object_set_new(o, "pod", json_string(r->pod));
		json_object_set_new(o, "ok", json_boolean(ok));
		for (size_t i = 0; i < r->rows.n; i++) {
			const struct row *x = &r->rows.v[i];
			json_t *j = json_object();

			json_object_set_new(j, "check", json_string(x->check));
			json_object_set_new(j, "verdict", json_string(verdict_name(x->verdict)));
			json_object_set_new(j, "detail", json_string(x->detail));
			if (x->ms >= 0)
				json_object_set_new(j, "ms", json_real(x->ms));
			json_array_append_new(rows, j);
		}
		json_object_set_new(o, "rows", rows);
		json_dumpf(o, out, JSON_INDENT(2));
		fputc('\n', out);
		json_decref(o);
	} else {
		fprintf(out, "boxxkite-netguard verify: netns %s%s%s\n\n", r->target,
			r->pod[0] ? ", pod " : "", r->pod);
		fprintf(out, "%-40s %-10s %s\n", "CHECK", "VERDICT", "DETAIL");
		for (size_t i = 0; i < r->rows.n; i++)
			fprintf(out, "%-40s %-10s %s\n", r->rows.v[i].check,
				verdict_name(r->rows.v[i].verdict), r->rows.v[i].detail);
		fprintf(out, "\n%s\n", ok ? "all checks passed" : "SOME CHECKS FAILED");
	}
	return ok ? 0 : 1;
}

int ng_verify_run(const struct ng_verify_opts *o, FILE *out)
{
	struct run r = {.o = o};
	struct ng_err err = {0};
	enum ng_netns_status st;
	struct stat ns;
	int fd, status;

	if (o->netns)
		snprintf(r.target, sizeof(r.target), "%s", o->netns);
	else
		snprintf(r.target, sizeof(r.target), "/proc/%d/ns/net", o->pid);
	if (ng_netns_open(r.target, &fd, &st, &err) < 0 || st != NG_NETNS_OK) {
		fprintf(stderr, "boxxkite-netguard verify: %s\n",
			st == NG_NETNS_OK ? err.msg : "the target is not a network namespace");
		return 2;
	}
	load_config(&r);
	if (ng_netns_run(fd, inside_pod, &r, &err) < 0)
		row(&r, "enter the pod's namespace", NG_FAIL, -1, "%s", err.msg);
	if (fstat(fd, &ns) == 0)
		check_capabilities(&r, &ns);
	else
		row(&r, "layer 2: no process can bypass it", NG_FAIL, -1, "fstat: %s", strerror(errno));
	close(fd);
	if (o->process)
		check_process(&r);
	status = print(&r, out);
	ng_vec_free(&r.rows);
	ng_annotations_free(&r.ann);
	ng_config_free(&r.cfg);
	json_decref(r.cfg_json);
	return status;
}

static int usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: boxxkite-netguard verify (--netns PATH | --pid PID) [--config FILE|DIR]\n"
		"         [--annotations JSON] [--process PID] [--json] [--timeout MS]\n"
		"         [--denied-probe ADDR:PORT] [--dns-name NAME]\n\n"
		"Checks a live pod: its table is present and identical to what the config\n"
		"compiles to; every cloud metadata address is refused at once; the DNS\n"
		"resolvers answer; an address outside the allowlist is refused. With\n"
		"--process, also checks that an exec'd process has a network namespace of\n"
		"its own with nothing but a loopback (layer one).\n"
		"Exit status: 0 all passed, 1 a check failed or was ambiguous, 2 usage.\n");
	return status;
}

int ng_verify_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"netns", required_argument, NULL, 'n'},
		{"pid", required_argument, NULL, 'p'},
		{"config", required_argument, NULL, 'c'},
		{"annotations", required_argument, NULL, 'a'},
		{"process", required_argument, NULL, 'x'},
		{"json", no_argument, NULL, 'j'},
		{"timeout", required_argument, NULL, 't'},
		{"denied-probe", required_argument, NULL, 'd'},
		{"dns-name", required_argument, NULL, 'N'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct ng_verify_opts o = {
		.timeout_ms = DEFAULT_TIMEOUT_MS, .denied = DEFAULT_DENIED, .dns_name = "."};
	long n = 0;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': o.netns = optarg; break;
		case 'p':
			if (!ng_arg_long("verify", "pid", optarg, 1, 0x7fffffff, &n))
				return 2;
			o.pid = (int)n;
			break;
		case 'c': o.config = optarg; break;
		case 'a': o.annotations = optarg; break;
		case 'x':
			if (!ng_arg_long("verify", "process", optarg, 1, 0x7fffffff, &n))
				return 2;
			o.process = (int)n;
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
	if ((!o.netns && o.pid <= 0) || (o.netns && o.pid > 0) || o.timeout_ms <= 0 || optind != argc)
		return usage(2);
	return ng_verify_run(&o, stdout);
}
