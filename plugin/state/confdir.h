/* Finding the plugin's entry on disk, for the commands people run on a node
 * (`verify`, `stats`): in a file holding the entry alone, in a conflist, or
 * in the conf dir's active config, chosen as containerd and CRI-O choose it
 * (the lexicographically first .conf/.conflist/.json). */
#ifndef NG_CONFFILE_H
#define NG_CONFFILE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

#define NG_DEFAULT_CONF_DIR "/etc/cni/net.d"
#define NG_PLUGIN_TYPE      "boxxkite-netguard"

/* Returns a new reference to our entry as libcni would pass it (with the
 * list's `name` and `cniVersion` added), or NULL with err: code 6 when the
 * file is not JSON, 7 when it holds no entry of ours. `used` receives the
 * file that was read. */
json_t *ng_conffile_entry(const char *path, char *used, size_t used_len, struct ng_err *err);

/* The active config file of a conf dir (first by name among .conf,
 * .conflist, .json, hidden files included, directories not), into `out`;
 * -1 when there is none. */
int ng_conffile_active(const char *dir, char *out, size_t len);

/* A name runtimes read as a network config (.conf, .conflist, .json). */
bool ng_is_conf_name(const char *name);

#endif
