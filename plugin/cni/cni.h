/* The CNI protocol: environment, stdin, verbs, result and error JSON. */
#ifndef NG_CNI_H
#define NG_CNI_H

#include <stdio.h>

#define NG_STDIN_MAX ((size_t)4 * 1024 * 1024)

/* Runs the verb named by CNI_COMMAND, reading the config from `in` and
 * writing the result or the error JSON (and nothing else) to `out`.
 * Returns the process exit status. */
int ng_cni_main(FILE *in, FILE *out);

#endif
