/* CNI ADD (cni_add.c). */
#ifndef NG_CNI_ADD_H
#define NG_CNI_ADD_H

#include <stdio.h>

#include "cni/inv.h"

int ng_cmd_add(struct inv *v, FILE *in);

#endif
