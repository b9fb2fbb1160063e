#include "node/nssock.h"

#include <linux/sock_diag.h>
#include <linux/xdp_diag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif

const char *ng_sock_kind_name(enum ng_sock_kind k)
{
	static const char *const names[NG_SOCK_KINDS] = {"packet", "raw", "raw6", "xdp"};

	return k < NG_SOCK_KINDS ? names[k] : "?";
}

/* ---- columns ------------------------------------------------------------- */

struct tok {
	const char *p;
	size_t n;
};

/* Splits a line at spaces and tabs, up to its end or newline; returns how
 * many columns it has (at most `max` are kept, but all are counted). */
static size_t columns(const char *line, struct tok *t, size_t max)
{
	size_t n = 0;
	const char *s = line;

	for (;;) {
		size_t len;

		s += strspn(s, " \t");
		if (!*s || *s == '\n')
			return n;
		len = strcspn(s, " \t\n");
		if (n < max)
			t[n] = (struct tok){s, len};
		n++;
		s += len;
	}
}

static bool is(const struct tok *t, const char *word)
{
	return t->n == strlen(word) && !memcmp(t->p, word, t->n);
}

/* The whole column is a number in `base` (10 or 16), no sign, no overflow. */
static bool number(const char *p, size_t n, int base, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 32)
		return false;
	for (size_t i = 0; i < n; i++) {
		int d;

		if (p[i] >= '0' && p[i] <= '9')
			d = p[i] - '0';
		else if (base == 16 && p[i] >= 'a' && p[i] <= 'f')
			d = p[i] - 'a' + 10;
		else if (base == 16 && p[i] >= 'A' && p[i] <= 'F')
			d = p[i] - 'A' + 10;
		else
			return false;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return false;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	*out = v;
	return true;
}

static bool num(const struct tok *t, int base, uint64_t *out)
{
	return number(t->p, t->n, base, out);
}

/* "HEX:HEX" with `addr_len` hex digits before the colon and 4 after. */
static bool addr_port(const struct tok *t, size_t addr_len, uint64_t *port)
{
	uint64_t a;

	return t->n == addr_len + 5 && t->p[addr_len] == ':' && number(t->p, addr_len, 16, &a) &&
	       number(t->p + addr_len + 1, 4, 16, port);
}

/* "HEX:HEX" of any widths (the queue and timer columns). */
static bool hex_pair(const struct tok *t)
{
	const char *c = memchr(t->p, ':', t->n);
	uint64_t a;

	return c && number(t->p, (size_t)(c - t->p), 16, &a) &&
	       number(c + 1, t->n - (size_t)(c - t->p) - 1, 16, &a);
}

/* ---- /proc/net/packet, raw, raw6 ----------------------------------------- */

static int packet_line(const char *line, struct ng_nssock *out)
{
	struct tok t[9];
	uint64_t v, proto, ino, running;

	if (columns(line, t, 9) != 9) {
		/* The header is "sk RefCnt Type Proto Iface R Rmem User Inode". */
		return columns(line, t, 1) >= 1 && is(&t[0], "sk") ? 0 : -1;
	}
	if (is(&t[0], "sk"))
		return 0;
	if (!num(&t[0], 16, &v) || !num(&t[1], 10, &v) || !num(&t[2], 10, &v) || !num(&t[3], 16, &proto) ||
	    t[3].n != 4 || !num(&t[4], 10, &v) || !num(&t[5], 10, &running) || running > 1 ||
	    !num(&t[6], 10, &v) || !num(&t[7], 10, &v) || !num(&t[8], 10, &ino) || ino == 0)
		return -1;
	*out = (struct ng_nssock){.ino = ino, .kind = NG_SOCK_PACKET, .proto = (int)proto};
	return 1;
}

static int raw_line(enum ng_sock_kind kind, const char *line, struct ng_nssock *out)
{
	size_t alen = kind == NG_SOCK_RAW ? 8 : 32;
	struct tok t[13];
	uint64_t v, proto, ino;
	size_t n = columns(line, t, 13);

	if (n >= 1 && is(&t[0], "sl"))
		return 0; /* "sl local_address rem_address st ..." */
	if (n != 13 || t[0].n < 2 || t[0].p[t[0].n - 1] != ':' || !number(t[0].p, t[0].n - 1, 10, &v) ||
	    !addr_port(&t[1], alen, &proto) || !addr_port(&t[2], alen, &v) || !num(&t[3], 16, &v) ||
	    !hex_pair(&t[4]) || !hex_pair(&t[5]) || !num(&t[6], 16, &v) || !num(&t[7], 10, &v) ||
	    !num(&t[8], 10, &v) || !num(&t[9], 10, &ino) || ino == 0 || !num(&t[10], 10, &v) ||
	    !num(&t[11], 16, &v) || !num(&t[12], 10, &v) || proto > 255)
		return -1;
	*out = (struct ng_nssock){.ino = ino, .kind = kind, .proto = (int)proto};
	return 1;
}

int ng_sock_parse_line(enum ng_sock_kind kind, const char *line, struct ng_nssock *out)
{
	switch (kind) {
	case NG_SOCK_PACKET: return packet_line(line, out);
	case NG_SOCK_RAW:
	case NG_SOCK_RAW6: return raw_line(kind, line, out);
	default: return -1;
	}
}

/* ---- /proc/net/protocols --------------------------------------------------- */

int ng_sock_parse_protocols_line(const char *line, enum ng_sock_kind *kind, long *count)
{
	static const char *const names[NG_SOCK_KINDS] = {"PACKET", "RAW", "RAWv6", "XDP"};
	struct tok t[3];
	uint64_t v;

	if (columns(line, t, 3) < 1)
		return 0;
	for (int k = 0; k < NG_SOCK_KINDS; k++) {
		if (!is(&t[0], names[k]))
			continue;
		if (columns(line, t, 3) < 3 || !num(&t[2], 10, &v) || v > (uint64_t)INT32_MAX)
			return -1;
		*kind = (enum ng_sock_kind)k;
		*count = (long)v;
		return 1;
	}
	return 0;
}

/* ---- sock_diag ------------------------------------------------------------- */

int ng_sock_parse_xdp_diag(const struct nlmsghdr *nlh, struct ng_nssock *out)
{
	const struct xdp_diag_msg *m;

	if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return -1;
	m = NLMSG_DATA(nlh);
	if (m->xdiag_family != AF_XDP || m->xdiag_ino == 0)
		return -1;
	*out = (struct ng_nssock){.ino = m->xdiag_ino, .kind = NG_SOCK_XDP, .proto = -1};
	return 0;
}

/* ---- who holds them -------------------------------------------------------- */

/* Exactly "socket:[INO]" in the n bytes at p, INO not 0. */
static bool socket_name(const char *p, size_t n, uint64_t *ino)
{
	static const char pre[] = "socket:[";

	return n > sizeof(pre) && !memcmp(p, pre, sizeof(pre) - 1) && p[n - 1] == ']' &&
	       number(p + sizeof(pre) - 1, n - sizeof(pre), 10, ino) && *ino != 0;
}

int ng_sock_link_inode(const char *link, uint64_t *ino)
{
	return socket_name(link, strlen(link), ino) ? 0 : -1;
}

int ng_sock_maps_line(const char *line, uint64_t *ino)
{
	struct tok t[6];
	uint64_t col, v;
	size_t n = columns(line, t, 6);
	const char *path;

	/* "start-end perms offset dev inode [path]": the path may hold spaces. */
	if (n < 5 || !memchr(t[0].p, '-', t[0].n) || t[1].n != 4 || !num(&t[2], 16, &v) || !hex_pair(&t[3]) ||
	    !num(&t[4], 10, &col))
		return -1;
	if (n == 5)
		return 0;
	path = t[5].p;
	return socket_name(path, strcspn(path, "\n"), ino) && *ino == col ? 1 : 0;
}

int ng_sock_uring_line(const char *line, uint64_t *ino)
{
	const char *s = line + strspn(line, " \t");
	size_t d = strspn(s, "0123456789");

	if (d == 0 || s[d] != ':' || s[d + 1] != ' ')
		return 0;
	s += d + 2;
	return socket_name(s, strcspn(s, "\n"), ino) ? 1 : 0;
}

int ng_sock_kind_of_protoname(const char *name, size_t len)
{
	static const char *const names[NG_SOCK_KINDS] = {"PACKET", "RAW", "RAWv6", "XDP"};

	if (len > 0 && name[len - 1] == '\0')
		len--;
	for (int k = 0; k < NG_SOCK_KINDS; k++)
		if (len == strlen(names[k]) && !memcmp(name, names[k], len))
			return k;
	return -1;
}

/* ---- what verify prints --------------------------------------------------- */

/* Appends `item` to the list in buf (", " between) if room is left after
 * it for ", and N more"; false when it was not. */
static bool append(char *buf, size_t len, const char *item)
{
	size_t o = strlen(buf);

	if (o + 2 + strlen(item) + sizeof(", and 99999 more") > len)
		return false;
	snprintf(buf + o, len - o, "%s%s", o ? ", " : "", item);
	return true;
}

static void and_more(char *buf, size_t len, size_t n)
{
	size_t o = strlen(buf);

	if (n)
		snprintf(buf + o, len - o, "%sand %zu more", o ? ", " : "", n);
}

void ng_sock_describe_holders(const struct ng_sockholders *h, int sandbox_pid, char *buf, size_t len)
{
	static const char *const how[] = {"", ", a thread's own fd", ", mapped",
					  ", an io_uring's registered file"};
	size_t i;

	if (!len)
		return;
	buf[0] = '\0';
	for (i = 0; i < h->v.n; i++) {
		const struct ng_sockholder *x = &h->v.v[i];
		char item[200], proto[24] = "";

		if (x->sock.kind != NG_SOCK_PACKET && x->sock.proto >= 0)
			snprintf(proto, sizeof(proto), " protocol %d", x->sock.proto);
		snprintf(item, sizeof(item), "%d (%.31s: %s%s%s%s%s%s)", x->pid, x->name,
			 ng_sock_kind_name(x->sock.kind), proto, x->how <= NG_HOLD_URING ? how[x->how] : "",
			 x->listed ? "" : ", not listed by the namespace",
			 x->in_ns ? "" : ", outside the pod's namespace",
			 sandbox_pid > 0 && x->pid == sandbox_pid ? ", the --sandbox-pid" : "");
		if (!append(buf, len, item))
			break;
	}
	and_more(buf, len, h->v.n - i + h->more);
}

void ng_sock_describe_socks(const ng_nssock_vec *v, char *buf, size_t len)
{
	size_t i;

	if (!len)
		return;
	buf[0] = '\0';
	for (i = 0; i < v->n; i++) {
		char item[64];

		snprintf(item, sizeof(item), "%s socket:[%llu]", ng_sock_kind_name(v->v[i].kind),
			 (unsigned long long)v->v[i].ino);
		if (!append(buf, len, item))
			break;
	}
	and_more(buf, len, v->n - i);
}

/* ---- lookup ---------------------------------------------------------------- */

static int by_ino(const void *a, const void *b)
{
	const struct ng_nssock *x = a, *y = b;

	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

void ng_nssock_sort(ng_nssock_vec *v)
{
	if (v->n > 1)
		qsort(v->v, v->n, sizeof(*v->v), by_ino);
}

const struct ng_nssock *ng_nssock_find(const ng_nssock_vec *v, uint64_t ino)
{
	size_t lo = 0, hi = v->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v->v[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < v->n && v->v[lo].ino == ino ? &v->v[lo] : NULL;
}
