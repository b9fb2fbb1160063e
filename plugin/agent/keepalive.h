/* The keep-alive thread: which of a pod's learned elements about to expire
 * a live connection still uses, looked up in the pod's conntrack table off
 * the main loop (a pod may hold 200,000 entries; the main loop holds every
 * pod's DNS answers).
 *
 * Once a second the main loop hands over, per pod with due elements, one
 * job (ng_ka_submit: at most one per pod in flight, NG_KA_ELEMS elements,
 * taken in turn from the due ones so none is left out for long). The
 * thread enters the pod's namespace, and for each (address, protocol)
 * (NG_KA_LOOKUPS at most) runs a filtered conntrack dump (kernel/ctdump.h:
 * only the entries to that address are copied out), stops as soon as
 * every element of that address has a live flow, and reads at most
 * NG_KA_ENTRIES entries per lookup (a pod with 200,000 flows to one
 * learned address costs one page of them). The job comes back (ng_ka_take,
 * the fd readable) with each element's verdict; the main loop refreshes
 * those in one commit. Bounds hit are counted per pod:
 * keepalive_deferred_total, keepalive_cut_total.
 *
 * A lookup costs the kernel a walk of the node's whole conntrack hash
 * (every bucket is locked in turn, whatever the filter): measured here
 * 20-40 ms with no entries in the pod, 100-170 ms beside 200,000 (README
 * "Threads and bounds"). So the thread runs at nice +10 (the main loop wins
 * the CPU), and rests after each lookup half as long as the lookup took:
 * at most two thirds of a core, however many pods ask. */
#ifndef NG_AGENT_KEEPALIVE_H
#define NG_AGENT_KEEPALIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/addr.h"
#include "base/err.h"
#include "spec/podref.h"
#include "state/record.h"

#define NG_KA_ELEMS   64   /* due elements looked up per pod per sweep */
#define NG_KA_LOOKUPS 8    /* distinct (address, protocol) among them: one dump each */
#define NG_KA_ENTRIES 256  /* conntrack entries read per lookup */
#define NG_KA_QUEUE   4096 /* jobs waiting (one per pod at most) */

struct ng_ka_elem {
	struct ng_ip ip;
	uint8_t proto;
	uint16_t p_lo, p_hi;
	bool live;     /* a live flow to ip, proto, a port in [p_lo, p_hi] */
	uint16_t port; /* that flow's port */
};

struct ng_ka_job {
	char key[256], nonce[NG_NONCE_LEN + 1];
	struct ng_podref pod; /* owned */
	uint32_t n;
	struct ng_ka_elem e[NG_KA_ELEMS];
	uint32_t cut;    /* lookups stopped by NG_KA_ENTRIES */
	char error[512]; /* "" when every lookup ran */
	struct ng_ka_job *next;
	struct ng_keepalive *k; /* the thread running it (NULL: ng_ka_run) */
};

int ng_ka_start(struct ng_keepalive **out, struct ng_err *err);
/* Stops the thread; jobs not done are freed. NULL: nothing. */
void ng_ka_stop(struct ng_keepalive *k);
/* Readable when done jobs wait (ng_ka_take). */
int ng_ka_fd(const struct ng_keepalive *k);

/* A new job for pod `pod` (copied), n = 0. NULL out of memory. */
struct ng_ka_job *ng_ka_job_new(const char *key, const char *nonce, const struct ng_podref *pod);
void ng_ka_job_free(struct ng_ka_job *j);
/* Hands `j` to the thread (owned by it from now on); false when the queue
 * is full (j is freed). */
bool ng_ka_submit(struct ng_keepalive *k, struct ng_ka_job *j);
/* Pod `key` was released: its waiting jobs are dropped, and one being
 * looked up stops before its next lookup (its namespace let go at once, so
 * that no socket of ours keeps a deleted pod's namespace alive). */
void ng_ka_cancel(struct ng_keepalive *k, const char *key);
/* One done job (the caller's to free), NULL when none. */
struct ng_ka_job *ng_ka_take(struct ng_keepalive *k);

/* The distinct (address, protocol) among the first n elements of j. */
uint32_t ng_ka_lookups(const struct ng_ka_job *j, uint32_t n);
/* One job's lookups, on the caller's thread (the thread's work; tests). */
void ng_ka_run(struct ng_ka_job *j);

#endif
