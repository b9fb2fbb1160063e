/* What every plugin invocation hands the node agent for its metrics: one
 * line appended to stateDir/invocations.log,
 *
 *   <VERB> <decision> <microseconds>\n      e.g. "ADD enforced 2140"
 *
 * with one O_APPEND write (atomic among the many plugin processes of a
 * node: a line is far below PIPE_BUF), no lock, no fsync: the cheapest
 * hand-off that cannot interleave. The agent reads the file from where it
 * left off and renames it away when it grows (agent/invfold.h). Nothing is
 * written when stateDir does not exist (no agent was ever installed on
 * this node): the plugin creates no directory for it. */
#ifndef NG_INVSTATS_H
#define NG_INVSTATS_H

#include <stddef.h>
#include <stdint.h>

#define NG_INV_LOG      "invocations.log"
#define NG_INV_LINE_MAX 64

struct ng_inv {
	char verb[8];      /* ADD DEL CHECK STATUS GC VERSION */
	char decision[24]; /* the decision log's, spaces as '_' */
	uint64_t us;
};

/* Formats one line (with its newline) into buf; returns its length, or -1
 * when verb or decision do not fit the format. Pure. */
int ng_inv_format(char *buf, size_t len, const char *verb, const char *decision, uint64_t us);

/* Parses one line (without or with its newline); 0, or -1 when it is not
 * one (a torn or foreign line teaches nothing). Pure. */
int ng_inv_parse(const char *line, size_t n, struct ng_inv *out);

/* Appends the line to stateDir/invocations.log when stateDir exists. */
void ng_inv_append(const char *state_dir, const char *line, size_t n);

#endif
