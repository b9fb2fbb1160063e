/* CNI DEL (cni_del.c). */
#ifndef NG_CNI_DEL_H
#define NG_CNI_DEL_H

#include <stdio.h>

#include "cni/inv.h"

int ng_cmd_del(struct inv *v, FILE *in);

#endif
