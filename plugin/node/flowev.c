/* One line of the flow log. See flowev.h. */
#include "node/flowev.h"

#include <ctype.h>
#include <netinet/in.h> /* before linux/netfilter.h, which would define in_addr */
#include <linux/netfilter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/decision_log.h"

static const char *const categories[] = {"metadata", "egress",    "ingress", "source", "raw",
					 "host",     NG_FLOW_DNS, "foreign", NULL};

static const char *const kinds[] = {"refusal", "skipped", "lost", "dropped", "unwatched"};

/* Bytes a pod or a rule chose (a log prefix, a query name) as printable
 * ASCII: anything else as \xNN, so every output is valid JSON and one line. */
static void clean(const char *in, char *out, size_t len)
{
	size_t o = 0;

	for (const unsigned char *c = (const unsigned char *)in; *c && o + 5 < len; c++) {
		if (*c >= 0x20 && *c < 0x7f && *c != '\\')
			out[o++] = (char)*c;
		else
			o += (size_t)snprintf(out + o, len - o, "\\x%02x", *c);
	}
	if (len)
		out[o < len ? o : len - 1] = '\0';
}

bool ng_flowev_parse_prefix(const char *prefix, char *category, size_t len, bool *would_deny)
{
	static const char word[] = NG_LOG_PREFIX_WORD, wd[] = "would_deny ";
	const char *p = prefix, *end;

	*would_deny = false;
	if (!p || strncmp(p, word, sizeof(word) - 1) != 0)
		return false;
	p += sizeof(word) - 1;
	if (!strncmp(p, wd, sizeof(wd) - 1)) {
		*would_deny = true;
		p += sizeof(wd) - 1;
	}
	end = strchr(p, ' ');
	if (!end)
		return false;
	for (int i = 0; categories[i]; i++)
		if ((size_t)(end - p) == strlen(categories[i]) &&
		    !strncmp(p, categories[i], (size_t)(end - p))) {
			snprintf(category, len, "%s", categories[i]);
			return true;
		}
	return false;
}

static void set_who(struct ng_flow_ev *ev, const char *ns, const char *name)
{
	clean(ns ? ns : "", ev->ns, sizeof(ev->ns));
	clean(name ? name : "", ev->name, sizeof(ev->name));
}

void ng_flowev_from_nflog(const struct ng_nflog_record *r, const struct ng_flow_who *who, bool node_side,
			  int64_t now_ms, struct ng_flow_ev *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = NG_FLOW_REFUSAL;
	/* When the kernel logged it, if it says (and says something sane). */
	ev->ts_ms = r->have_ts && r->ts_sec > 0 && r->ts_sec < 100000000000LL && r->ts_usec >= 0 &&
				    r->ts_usec < 1000000
			    ? r->ts_sec * 1000 + r->ts_usec / 1000
			    : now_ms;
	ev->table = node_side ? NG_LOG_NODE : r->family == NFPROTO_NETDEV ? NG_LOG_GUARD : NG_LOG_POD;
	set_who(ev, who->ns, who->name);
	ev->src = r->src;
	ev->dst = r->dst;
	ev->proto = r->src.fam ? r->proto : 0;
	ev->have_ports = r->have_ports;
	ev->sport = r->sport;
	ev->dport = r->dport;
	if (!r->src.fam)
		ev->ethertype = r->ethertype;
	if (!ng_flowev_parse_prefix(r->prefix, ev->category, sizeof(ev->category), &ev->would_deny)) {
		snprintf(ev->category, sizeof(ev->category), "foreign");
		clean(r->prefix ? r->prefix : "(no prefix)", ev->comment, sizeof(ev->comment));
		return;
	}
	ev->ingress = !strcmp(ev->category, "ingress");
	if (!who->deny_known && ev->table == NG_LOG_POD && !strcmp(ev->category, "egress") && !ev->would_deny)
		/* Reject or drop is the pod's denyAction, which only its record
		 * says: the rule is named, not guessed. */
		snprintf(ev->comment, sizeof(ev->comment), "%s: refused (denyAction)",
			 ng_refuse_what(NG_LOG_POD, "egress"));
	else
		ng_refuse_comment((enum ng_log_table)ev->table, ev->category, ev->would_deny, who->deny,
				  ev->proto, ev->comment, sizeof(ev->comment));
}

void ng_flowev_note(struct ng_flow_ev *ev, enum ng_flow_kind kind, const char *ns, const char *name,
		    enum ng_log_table table, uint64_t count, const char *why, int64_t now_ms)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = (uint8_t)kind;
	ev->ts_ms = now_ms;
	ev->table = (uint8_t)table;
	set_who(ev, ns, name);
	ev->count = count;
	clean(why, ev->comment, sizeof(ev->comment));
}

void ng_flowev_set_query(struct ng_flow_ev *ev, const char *name, uint16_t qtype)
{
	clean(name, ev->query, sizeof(ev->query));
	ev->qtype = qtype;
}

void ng_flowev_who_of_prefix(const char *prefix, char *ns, size_t ns_len, char *name, size_t name_len)
{
	const char *end = prefix ? strstr(prefix, ": ") : NULL, *p = end, *slash;

	snprintf(ns, ns_len, "?");
	snprintf(name, name_len, "?");
	if (!end)
		return;
	/* the pod's word is the last before ": " */
	while (p > prefix && p[-1] != ' ')
		p--;
	slash = memchr(p, '/', (size_t)(end - p));
	if (!slash)
		return;
	snprintf(ns, ns_len, "%.*s", (int)(slash - p), p);
	snprintf(name, name_len, "%.*s", (int)(end - slash - 1), slash + 1);
}

/* ---- JSON ------------------------------------------------------------------ */

static const char *proto_name(uint8_t p)
{
	switch (p) {
	case IPPROTO_TCP: return "tcp";
	case IPPROTO_UDP: return "udp";
	case IPPROTO_ICMP: return "icmp";
	case IPPROTO_ICMPV6: return "icmpv6";
	default: return NULL;
	}
}

static void set_ip(json_t *o, const char *key, const struct ng_ip *ip)
{
	char s[NG_IP_STRLEN];

	ng_ip_format(ip, s, sizeof(s));
	json_object_set_new(o, key, json_string(s));
}

static const char *count_key(uint8_t kind)
{
	return kind == NG_FLOW_SKIPPED ? "skipped" : kind == NG_FLOW_LOST ? "lost" : "dropped";
}

json_t *ng_flowev_to_json(const struct ng_flow_ev *ev)
{
	json_t *o = json_object();
	char ts[64];
	time_t sec = (time_t)(ev->ts_ms / 1000);

	if (!o)
		return NULL;
	ng_utc_format(sec, (long)(ev->ts_ms % 1000), ts, sizeof(ts));
	json_object_set_new(o, "ts", json_string(ts));
	json_object_set_new(o, "event", json_string(kinds[ev->kind < 5 ? ev->kind : 0]));
	if (ev->seq)
		json_object_set_new(o, "seq", json_integer((json_int_t)ev->seq));
	if (ev->ns[0] || ev->name[0]) {
		json_object_set_new(o, "pod_namespace", json_string(ev->ns));
		json_object_set_new(o, "pod_name", json_string(ev->name));
	}
	if (ev->kind != NG_FLOW_REFUSAL) {
		if (ev->kind == NG_FLOW_SKIPPED || ev->kind == NG_FLOW_LOST)
			json_object_set_new(o, "table", json_string(ng_log_table_name(ev->table)));
		if (ev->kind != NG_FLOW_UNWATCHED)
			json_object_set_new(o, count_key(ev->kind), json_integer((json_int_t)ev->count));
		json_object_set_new(o, "why", json_string(ev->comment));
		return o;
	}
	json_object_set_new(o, "direction", json_string(ev->ingress ? "ingress" : "egress"));
	json_object_set_new(o, "table", json_string(ng_log_table_name(ev->table)));
	json_object_set_new(o, "category", json_string(ev->category));
	json_object_set_new(o, "verdict", json_string(ev->would_deny ? "would_deny" : "refused"));
	if (ev->src.fam) {
		const char *pn = proto_name(ev->proto);

		json_object_set_new(o, "proto", pn ? json_string(pn) : json_integer(ev->proto));
		set_ip(o, "src", &ev->src);
		if (ev->have_ports)
			json_object_set_new(o, "sport", json_integer(ev->sport));
		set_ip(o, "dst", &ev->dst);
		if (ev->have_ports)
			json_object_set_new(o, "dport", json_integer(ev->dport));
	} else if (ev->ethertype) {
		char et[8];

		snprintf(et, sizeof(et), "0x%04x", ev->ethertype);
		json_object_set_new(o, "ethertype", json_string(et));
	}
	if (ev->query[0]) {
		json_object_set_new(o, "query", json_string(ev->query));
		json_object_set_new(o, "qtype", json_integer(ev->qtype));
	}
	json_object_set_new(o, "comment", json_string(ev->comment));
	return o;
}

/* The number in s[at..at+n), all digits; -1 when not. */
static int digits(const char *s, size_t at, size_t n)
{
	int v = 0;

	for (size_t i = at; i < at + n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* "2026-12-01T10:00:00.123Z" (exactly that shape) -> unix ms; -1 when not. */
static int64_t parse_ts(const char *s)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
	struct tm tm = {0};
	int ms;

	if (!s || strlen(s) != sizeof(shape) - 1)
		return -1;
	for (size_t i = 0; i < sizeof(shape) - 1; i++)
		if (shape[i] != 'd' && s[i] != shape[i])
			return -1;
	tm.tm_year = digits(s, 0, 4) - 1900;
	tm.tm_mon = digits(s, 5, 2) - 1;
	tm.tm_mday = digits(s, 8, 2);
	tm.tm_hour = digits(s, 11, 2);
	tm.tm_min = digits(s, 14, 2);
	tm.tm_sec = digits(s, 17, 2);
	ms = digits(s, 20, 3);
	if (tm.tm_year < 0 || tm.tm_mon < 0 || tm.tm_mday < 0 || tm.tm_hour < 0 || tm.tm_min < 0 ||
	    tm.tm_sec < 0 || ms < 0)
		return -1;
	return (int64_t)timegm(&tm) * 1000 + ms;
}

static void get_str(const json_t *o, const char *key, char *out, size_t len)
{
	const char *v = json_string_value(json_object_get(o, key));

	snprintf(out, len, "%s", v ? v : "");
}

static uint16_t get_port(const json_t *o, const char *key, bool *have)
{
	json_int_t v = json_integer_value(json_object_get(o, key));

	if (json_is_integer(json_object_get(o, key)) && v >= 0 && v <= 65535) {
		*have = true;
		return (uint16_t)v;
	}
	return 0;
}

static uint8_t table_of(const char *s)
{
	return !strcmp(s, "guard") ? NG_LOG_GUARD : !strcmp(s, "node") ? NG_LOG_NODE : NG_LOG_POD;
}

int ng_flowev_from_json(const json_t *o, struct ng_flow_ev *ev, struct ng_err *err)
{
	const char *event = json_string_value(json_object_get(o, "event"));
	const json_t *proto = json_object_get(o, "proto");
	char buf[NG_IP_STRLEN];
	int k;

	memset(ev, 0, sizeof(*ev));
	if (!json_is_object(o) || !event)
		return ng_fail(err, NG_E_DECODE, "not a flow log line (no event)");
	for (k = 0; k < 5 && strcmp(kinds[k], event) != 0; k++) {
	}
	if (k == 5)
		return ng_fail(err, NG_E_DECODE, "unknown event \"%.40s\"", event);
	ev->kind = (uint8_t)k;
	ev->ts_ms = parse_ts(json_string_value(json_object_get(o, "ts")));
	if (ev->ts_ms < 0)
		return ng_fail(err, NG_E_DECODE, "ts: not a UTC time");
	ev->seq = (uint64_t)json_integer_value(json_object_get(o, "seq"));
	get_str(o, "pod_namespace", ev->ns, sizeof(ev->ns));
	get_str(o, "pod_name", ev->name, sizeof(ev->name));
	get_str(o, "table", buf, sizeof(buf));
	ev->table = table_of(buf);
	if (k != NG_FLOW_REFUSAL) {
		json_int_t n = json_integer_value(json_object_get(o, count_key(ev->kind)));

		ev->count = n > 0 ? (uint64_t)n : 0;
		get_str(o, "why", ev->comment, sizeof(ev->comment));
		return 0;
	}
	get_str(o, "direction", buf, sizeof(buf));
	ev->ingress = !strcmp(buf, "ingress");
	get_str(o, "category", ev->category, sizeof(ev->category));
	get_str(o, "verdict", buf, sizeof(buf));
	ev->would_deny = !strcmp(buf, "would_deny");
	get_str(o, "comment", ev->comment, sizeof(ev->comment));
	get_str(o, "query", ev->query, sizeof(ev->query));
	ev->qtype = (uint16_t)json_integer_value(json_object_get(o, "qtype"));
	if (json_is_integer(proto))
		ev->proto = (uint8_t)json_integer_value(proto);
	for (uint8_t p = 1; json_is_string(proto) && p < 255; p++)
		if (proto_name(p) && !strcmp(proto_name(p), json_string_value(proto)))
			ev->proto = p;
	get_str(o, "src", buf, sizeof(buf));
	if (buf[0] && ng_ip_parse(buf, &ev->src) < 0)
		return ng_fail(err, NG_E_DECODE, "src: not an address");
	get_str(o, "dst", buf, sizeof(buf));
	if (buf[0] && ng_ip_parse(buf, &ev->dst) < 0)
		return ng_fail(err, NG_E_DECODE, "dst: not an address");
	ev->sport = get_port(o, "sport", &ev->have_ports);
	ev->dport = get_port(o, "dport", &ev->have_ports);
	get_str(o, "ethertype", buf, sizeof(buf));
	ev->ethertype = (uint16_t)strtoul(buf, NULL, 16);
	return 0;
}

/* ---- text ------------------------------------------------------------------ */

static void endpoint(const struct ng_flow_ev *ev, const struct ng_ip *ip, uint16_t port, char *buf,
		     size_t len)
{
	char s[NG_IP_STRLEN];

	ng_ip_format(ip, s, sizeof(s));
	if (!ev->have_ports)
		snprintf(buf, len, "%s", s);
	else if (ip->fam == NG_V6)
		snprintf(buf, len, "[%s]:%u", s, port);
	else
		snprintf(buf, len, "%s:%u", s, port);
}

void ng_flowev_text(const struct ng_flow_ev *ev, char *buf, size_t len)
{
	char ts[64], who[NG_FLOW_NS_MAX + NG_FLOW_NAME_MAX + 2], what[320] = "", src[80], dst[80];

	ng_utc_format((time_t)(ev->ts_ms / 1000), (long)(ev->ts_ms % 1000), ts, sizeof(ts));
	if (ev->ns[0] || ev->name[0])
		snprintf(who, sizeof(who), "%s/%s", ev->ns, ev->name);
	else
		snprintf(who, sizeof(who), "-");
	switch (ev->kind) {
	case NG_FLOW_SKIPPED:
		snprintf(buf, len, "%s %s skipped %llu refusal(s) of the %s table: %s", ts, who,
			 (unsigned long long)ev->count, ng_log_table_name(ev->table), ev->comment);
		return;
	case NG_FLOW_LOST:
		snprintf(buf, len, "%s %s lost %llu log message(s): %s", ts, who,
			 (unsigned long long)ev->count, ev->comment);
		return;
	case NG_FLOW_DROPPED:
		snprintf(buf, len, "%s %s dropped %llu event(s): %s", ts, who, (unsigned long long)ev->count,
			 ev->comment);
		return;
	case NG_FLOW_UNWATCHED: snprintf(buf, len, "%s %s not watched: %s", ts, who, ev->comment); return;
	default: break;
	}
	if (ev->src.fam) {
		const char *pn = proto_name(ev->proto);
		char num[8];

		snprintf(num, sizeof(num), "%u", ev->proto);
		endpoint(ev, &ev->src, ev->sport, src, sizeof(src));
		endpoint(ev, &ev->dst, ev->dport, dst, sizeof(dst));
		snprintf(what, sizeof(what), "%s %s -> %s", pn ? pn : num, src, dst);
	} else if (ev->ethertype) {
		snprintf(what, sizeof(what), "ethertype 0x%04x", ev->ethertype);
	} else {
		snprintf(what, sizeof(what), "-");
	}
	if (ev->query[0]) {
		size_t n = strlen(what);

		snprintf(what + n, sizeof(what) - n, " query %s type %u", ev->query, ev->qtype);
	}
	snprintf(buf, len, "%s %s %s %s %s %s %s (%s)", ts, who, ev->ingress ? "ingress" : "egress",
		 ng_log_table_name(ev->table), ev->category, ev->would_deny ? "WOULD_DENY" : "REFUSED", what,
		 ev->comment);
}

/* ---- filters --------------------------------------------------------------- */

int ng_flow_filter_pod(struct ng_flow_filter *f, const char *ns_name, struct ng_err *err)
{
	const char *slash = strchr(ns_name, '/');

	if (!slash || slash == ns_name || !slash[1] || strchr(slash + 1, '/') ||
	    (size_t)(slash - ns_name) >= sizeof(f->ns) || strlen(slash + 1) >= sizeof(f->name))
		return ng_fail(err, NG_E_CONFIG, "--pod: want NAMESPACE/NAME, got \"%.80s\"", ns_name);
	snprintf(f->ns, sizeof(f->ns), "%.*s", (int)(slash - ns_name), ns_name);
	snprintf(f->name, sizeof(f->name), "%s", slash + 1);
	f->pod = true;
	return 0;
}

int ng_flow_filter_category(struct ng_flow_filter *f, const char *category, struct ng_err *err)
{
	for (int i = 0; categories[i]; i++)
		if (!strcmp(categories[i], category)) {
			snprintf(f->category, sizeof(f->category), "%s", category);
			return 0;
		}
	if (!strcmp(category, "would_deny")) {
		snprintf(f->category, sizeof(f->category), "%s", category);
		return 0;
	}
	return ng_fail(err, NG_E_CONFIG,
		       "--category: \"%.40s\" is none of metadata, egress, ingress, source, raw, host, "
		       "dns-refused, foreign, would_deny",
		       category);
}

bool ng_flow_match(const struct ng_flow_filter *f, const struct ng_flow_ev *ev)
{
	bool note = ev->kind != NG_FLOW_REFUSAL;

	if (f->since_ms && ev->ts_ms < f->since_ms)
		return false;
	if (f->pod && (ev->ns[0] || ev->name[0] || !note) &&
	    (strcmp(f->ns, ev->ns) != 0 || strcmp(f->name, ev->name) != 0))
		return false;
	if (note || !f->category[0])
		return true;
	if (!strcmp(f->category, "would_deny"))
		return ev->would_deny;
	return !strcmp(f->category, ev->category);
}

int64_t ng_duration_ms(const char *s)
{
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)*s) || *s == '-')
		return -1;
	v = strtod(s, &end);
	if (end == s || !(v >= 0 && v <= 1e9)) /* NaN fails both */
		return -1;
	if (!strcmp(end, "ms"))
		return (int64_t)v;
	if (!*end || !strcmp(end, "s"))
		return (int64_t)(v * 1000);
	if (!strcmp(end, "m"))
		return (int64_t)(v * 60000);
	if (!strcmp(end, "h"))
		return (int64_t)(v * 3600000);
	if (!strcmp(end, "d"))
		return (int64_t)(v * 86400000);
	return -1;
}
