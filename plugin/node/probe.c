#include "node/probe.h"
#include "base/clock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

const char *ng_probe_result_name(enum ng_probe_result r)
{
	switch (r) {
	case NG_PROBE_CONNECTED: return "connected";
	case NG_PROBE_REFUSED: return "refused";
	case NG_PROBE_UNREACHABLE: return "unreachable";
	case NG_PROBE_TIMEOUT: return "timeout";
	case NG_PROBE_ERROR: break;
	}
	return "error";
}

static double now_ms(void)
{
	return (double)ng_mono_us() / 1e3;
}

static socklen_t sockaddr_of(const struct ng_ip *ip, uint16_t port, unsigned ifindex,
			     struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (ip->fam == NG_V4) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		memcpy(&s->sin_addr, ip->a, 4);
		return sizeof(*s);
	}
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(port);
	s6->sin6_scope_id = ifindex;
	memcpy(&s6->sin6_addr, ip->a, 16);
	return sizeof(*s6);
}

/* Classifies a failed connect/recv errno. A reject with TCP reset gives
 * ECONNREFUSED; ICMP admin-prohibited gives EACCES/EPERM on some paths and
 * EHOSTUNREACH on others (the kernel maps ICMP codes per family). */
static enum ng_probe_result classify(int e)
{
	switch (e) {
	case ECONNREFUSED:
	case EACCES:
	case EPERM: return NG_PROBE_REFUSED;
	case ENETUNREACH:
	case EHOSTUNREACH:
	case EADDRNOTAVAIL: return NG_PROBE_UNREACHABLE;
	case ETIMEDOUT: return NG_PROBE_TIMEOUT;
	default: return NG_PROBE_ERROR;
	}
}

/* Non-blocking connect bounded by timeout_ms; 0 when connected, else the
 * errno (ETIMEDOUT on timeout). */
static int connect_timed(int fd, const struct sockaddr_storage *ss, socklen_t len, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	int rc, soerr = 0;
	socklen_t sl = sizeof(soerr);

	if (connect(fd, (const struct sockaddr *)ss, len) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return errno;
	do {
		rc = poll(&p, 1, timeout_ms);
	} while (rc < 0 && errno == EINTR);
	if (rc == 0)
		return ETIMEDOUT;
	if (rc < 0)
		return errno;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
		return errno;
	return soerr;
}

void ng_probe_tcp(const struct ng_ip *ip, uint16_t port, unsigned ifindex, int timeout_ms,
		  struct ng_probe *out)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(ip, port, ifindex, &ss);
	double t0 = now_ms();
	int fd, e;

	memset(out, 0, sizeof(*out));
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		out->err = errno;
		out->result = NG_PROBE_ERROR;
		return;
	}
	e = connect_timed(fd, &ss, len, timeout_ms);
	out->ms = now_ms() - t0;
	out->err = e;
	out->result = e == 0 ? NG_PROBE_CONNECTED : classify(e);
	close(fd);
}

/* A minimal query: id, RD, one question (NS, IN). */
static size_t build_query(const char *name, uint16_t id, uint8_t *q, size_t cap)
{
	size_t n = 12;
	const char *p = name;

	if (cap < 12 + 256 + 4)
		return 0;
	memset(q, 0, 12);
	q[0] = (uint8_t)(id >> 8);
	q[1] = (uint8_t)id;
	q[2] = 0x01; /* RD */
	q[5] = 1;    /* QDCOUNT */
	while (*p && strcmp(p, ".") != 0) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);

		if (l == 0 || l > 63 || n + l + 2 > 12 + 255)
			return 0;
		q[n++] = (uint8_t)l;
		memcpy(q + n, p, l);
		n += l;
		p += l + (dot ? 1 : 0);
	}
	q[n++] = 0;
	q[n++] = 0;
	q[n++] = 2; /* NS */
	q[n++] = 0;
	q[n++] = 1; /* IN */
	return n;
}

/* Waits for one readable event within the remaining time. */
static int wait_readable(int fd, double deadline)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int left = (int)(deadline - now_ms()), rc;

	if (left <= 0)
		return ETIMEDOUT;
	do {
		rc = poll(&p, 1, left);
	} while (rc < 0 && errno == EINTR);
	if (rc == 0)
		return ETIMEDOUT;
	return rc < 0 ? errno : 0;
}

void ng_probe_dns(const struct ng_ip *server, int tcp, const char *name, int timeout_ms, struct ng_probe *out)
{
	uint8_t q[512], r[4096];
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(server, 53, 0, &ss);
	uint16_t id = (uint16_t)(getpid() ^ (int)now_ms());
	double t0 = now_ms(), deadline = t0 + timeout_ms;
	size_t qlen = build_query(name, id, q + 2, sizeof(q) - 2);
	ssize_t got = -1;
	int fd, e = 0;

	memset(out, 0, sizeof(*out));
	out->result = NG_PROBE_ERROR;
	if (qlen == 0) {
		out->err = EINVAL;
		return;
	}
	fd = socket(ss.ss_family, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		out->err = errno;
		return;
	}
	e = connect_timed(fd, &ss, len, timeout_ms);
	if (e == 0) {
		union {
			struct sockaddr sa;
			struct sockaddr_in in;
			struct sockaddr_in6 in6;
		} me;
		socklen_t ml = sizeof(me);

		memset(&me, 0, sizeof(me));
		if (getsockname(fd, &me.sa, &ml) == 0)
			out->lport = ntohs(me.sa.sa_family == AF_INET ? me.in.sin_port : me.in6.sin6_port);
		/* TCP frames the message with a 2-byte length. */
		q[0] = (uint8_t)(qlen >> 8);
		q[1] = (uint8_t)qlen;
		if (send(fd, tcp ? q : q + 2, tcp ? qlen + 2 : qlen, MSG_NOSIGNAL) < 0)
			e = errno;
	}
	while (e == 0) {
		e = wait_readable(fd, deadline);
		if (e)
			break;
		got = recv(fd, r, sizeof(r), 0);
		if (got < 0) {
			e = errno == EAGAIN ? 0 : errno;
			continue;
		}
		if (got == 0) {
			e = ECONNRESET;
			break;
		}
		break; /* for TCP the first segment holds the header we need */
	}
	out->ms = now_ms() - t0;
	close(fd);
	if (e) {
		out->err = e;
		out->result = classify(e);
		return;
	}
	const uint8_t *h = tcp ? r + 2 : r;
	if ((size_t)got < (tcp ? 14u : 12u) || h[0] != (uint8_t)(id >> 8) || h[1] != (uint8_t)id ||
	    !(h[2] & 0x80)) {
		out->err = EPROTO;
		return;
	}
	out->result = NG_PROBE_CONNECTED;
	out->rcode = h[3] & 0x0f;
	out->question_ok = (size_t)got >= (tcp ? 2u : 0u) + qlen && h[4] == 0 && h[5] == 1 &&
			   !memcmp(h + 12, q + 2 + 12, qlen - 12);
	out->answers = (unsigned)(h[6] << 8 | h[7]);
}
