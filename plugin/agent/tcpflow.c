#include "agent/tcpflow.h"

#include <stdlib.h>
#include <string.h>

#define MSG_MAX ((size_t)65535 + 2)

struct ng_tcpflow *ng_tcp_flow(struct ng_tcpflows *fs, const struct ng_pkt *p, int64_t now_ms)
{
	struct ng_tcpflow *free_slot = NULL;

	for (int i = 0; i < NG_TCP_FLOWS; i++) {
		struct ng_tcpflow *f = &fs->f[i];

		if (!f->used) {
			if (!free_slot)
				free_slot = f;
			continue;
		}
		if (f->sport == p->sport && f->dport == p->dport && ng_ip_eq(&f->peer, &p->src)) {
			/* A new SYN-ACK on the same ports: a new connection. */
			if ((p->tcp_flags & NG_TCP_SYN) && p->seq + 1 != f->next) {
				f->next = p->seq + 1;
				f->len = 0;
			}
			f->last_ms = now_ms;
			return f;
		}
	}
	if (!(p->tcp_flags & NG_TCP_SYN) || !free_slot)
		return NULL;
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->used = true;
	free_slot->pod_held = &fs->held;
	free_slot->peer = p->src;
	free_slot->sport = p->sport;
	free_slot->dport = p->dport;
	free_slot->next = p->seq + 1; /* the SYN takes one sequence number */
	free_slot->last_ms = now_ms;
	return free_slot;
}

int ng_tcp_segment(struct ng_tcpflow *f, const struct ng_pkt *p, size_t *budget, ng_tcp_msg_fn fn, void *data)
{
	uint32_t seq = p->seq + ((p->tcp_flags & NG_TCP_SYN) ? 1u : 0u);
	int32_t ahead = (int32_t)(seq - f->next);
	const uint8_t *d = p->payload;
	size_t n = p->payload_len, off = 0;
	int done = 0;

	f->undo_len = f->len;
	f->undo_next = f->next;
	f->consumed = 0;
	if (n == 0)
		return 0;
	if (ahead > 0)
		return -1; /* a gap: wait for the missing bytes */
	if ((size_t)(-(int64_t)ahead) >= n)
		return 0; /* all of it read before: a retransmission */
	d += -(int64_t)ahead;
	n -= (size_t)(-(int64_t)ahead);
	if (f->len + n > f->cap) {
		uint32_t want = f->len + (uint32_t)n;
		uint8_t *nb;

		/* Buffered bytes never exceed one message plus this segment. */
		if (want > MSG_MAX + 65535 || *budget + (want - f->cap) > (size_t)NG_TCP_BUDGET ||
		    *f->pod_held + (want - f->cap) > (size_t)NG_TCP_POD_BUDGET)
			return -1;
		nb = realloc(f->buf, want);
		if (!nb)
			return -1;
		*budget += want - f->cap;
		*f->pod_held += want - f->cap;
		f->buf = nb;
		f->cap = want;
	}
	memcpy(f->buf + f->len, d, n);
	f->len += (uint32_t)n;
	f->next += (uint32_t)n;
	for (;;) {
		uint32_t mlen;

		if (f->len - off < 2)
			break;
		mlen = (uint32_t)f->buf[off] << 8 | f->buf[off + 1];
		if (f->len - off < 2 + mlen)
			break;
		fn(f->buf + off + 2, mlen, data);
		off += 2 + mlen;
		done++;
	}
	f->consumed = (uint32_t)off;
	return done;
}

void ng_tcp_done(struct ng_tcpflow *f, bool accepted, size_t *budget)
{
	if (!accepted) {
		f->len = f->undo_len;
		f->next = f->undo_next;
		f->consumed = 0;
		return;
	}
	if (f->consumed) {
		memmove(f->buf, f->buf + f->consumed, f->len - f->consumed);
		f->len -= f->consumed;
		f->consumed = 0;
	}
	/* Give back what a finished message needed. */
	if (f->len == 0 && f->cap > 4096) {
		free(f->buf);
		*budget -= f->cap;
		*f->pod_held -= f->cap;
		f->buf = NULL;
		f->cap = 0;
	}
}

void ng_tcp_close(struct ng_tcpflow *f, size_t *budget)
{
	if (!f->used)
		return;
	free(f->buf);
	*budget -= f->cap;
	*f->pod_held -= f->cap;
	memset(f, 0, sizeof(*f));
}
