/* The texts of `install --help`, `uninstall --help`, and their lines in
 * `boxxkite-netguard help`: each command describes itself. */
#ifndef NG_INSTALL_HELP_H
#define NG_INSTALL_HELP_H

#include <stdio.h>

void ng_install_usage(FILE *f); /* the two lines of `boxxkite-netguard help` */
void ng_install_help(FILE *f);
void ng_uninstall_help(FILE *f);

#endif
