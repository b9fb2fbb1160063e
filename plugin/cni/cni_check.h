/* CNI CHECK (cni_check.c). */
#ifndef NG_CNI_CHECK_H
#define NG_CNI_CHECK_H

#include <stdio.h>

#include "cni/inv.h"

int ng_cmd_check(struct inv *v, FILE *in);

#endif
