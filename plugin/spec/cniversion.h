/* The CNI spec versions this plugin speaks: the one list, used by config
 * validation, VERSION, `version` and result conversion. Pure. */
#ifndef NG_CNIVERSION_H
#define NG_CNIVERSION_H

#include <stdbool.h>

/* The newest version, answered when a caller asks for none we know. */
#define NG_CNI_VERSION_LATEST "1.1.0"

/* NULL-terminated, oldest first. */
extern const char *const ng_supported_versions[];

bool ng_version_supported(const char *v);
/* -1, 0, 1 like strcmp, for dotted versions. */
int ng_version_cmp(const char *a, const char *b);
/* "0.3.0, 0.3.1, ..." for messages (a static buffer, built once). */
const char *ng_versions_text(void);

#endif
