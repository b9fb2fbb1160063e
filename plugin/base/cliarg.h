/* Strict number parsing for the node-side commands' options: a typo such
 * as `--pid 12x4` is an error, never pid 12. */
#ifndef NG_CLIARG_H
#define NG_CLIARG_H

#include <stdbool.h>

/* Parses a decimal integer in [lo, hi]; prints "CMD: --OPT ..." to stderr
 * and returns false otherwise. */
bool ng_arg_long(const char *cmd, const char *opt, const char *s, long lo, long hi, long *out);
bool ng_arg_double(const char *cmd, const char *opt, const char *s, double lo, double hi, double *out);

#endif
