#include "policy/linkdiff.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct out {
	char *buf;
	size_t len, at;
	int n;
};

static void say(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int w;

	o->n++;
	if (o->at + 1 >= o->len)
		return;
	if (o->n > 1) {
		w = snprintf(o->buf + o->at, o->len - o->at, "; ");
		o->at = w < 0 ? o->at : o->at + (size_t)w < o->len ? o->at + (size_t)w : o->len - 1;
	}
	va_start(ap, fmt);
	w = vsnprintf(o->buf + o->at, o->len - o->at, fmt, ap);
	va_end(ap);
	o->at = w < 0 ? o->at : o->at + (size_t)w < o->len ? o->at + (size_t)w : o->len - 1;
}

static void mac_str(const struct ng_link_facts *f, char *buf, size_t len)
{
	if (!f->have_mac)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", f->mac[0], f->mac[1], f->mac[2],
			 f->mac[3], f->mac[4], f->mac[5]);
}

static bool has_ll(const struct ng_link_facts *f, const struct ng_ip *ip)
{
	for (size_t i = 0; i < f->n_link_local; i++)
		if (ng_ip_eq(&f->link_local[i], ip))
			return true;
	return false;
}

/* The link-local addresses of `a` that `b` lacks, as `what` ("added",
 * "gone"). */
static void ll_missing(struct out *o, const struct ng_link_facts *a, const struct ng_link_facts *b,
		       const char *what)
{
	char ip[NG_IP_STRLEN];

	for (size_t i = 0; i < a->n_link_local; i++) {
		if (has_ll(b, &a->link_local[i]))
			continue;
		ng_ip_format(&a->link_local[i], ip, sizeof(ip));
		say(o, "link-local %s %s", ip, what);
	}
}

int ng_link_diff(const struct ng_link_facts *recorded, const struct ng_link_facts *live, char *out,
		 size_t len)
{
	struct out o = {out, len, 0, 0};
	char a[32], b[32];

	if (len)
		out[0] = '\0';
	if (recorded->have_mac != live->have_mac ||
	    (recorded->have_mac && memcmp(recorded->mac, live->mac, sizeof(recorded->mac)) != 0)) {
		mac_str(recorded, a, sizeof(a));
		mac_str(live, b, sizeof(b));
		say(&o, "mac %s -> %s", a, b);
	}
	ll_missing(&o, live, recorded, "added");
	ll_missing(&o, recorded, live, "gone");
	if (recorded->ifindex != live->ifindex)
		say(&o, "ifindex %d -> %d", recorded->ifindex, live->ifindex);
	if (strcmp(recorded->peer, live->peer) != 0)
		say(&o, "host peer %s -> %s", recorded->peer[0] ? recorded->peer : "none",
		    live->peer[0] ? live->peer : "none");
	else if (recorded->peer_ifindex != live->peer_ifindex)
		say(&o, "host peer %s ifindex %d -> %d", recorded->peer, recorded->peer_ifindex,
		    live->peer_ifindex);
	return o.n;
}
