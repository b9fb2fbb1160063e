/* The installer's JSON work, pure (JSON in, JSON out, no files): checking a
 * network config the way libcni reads it, validating our entry with the
 * plugin's own parser, merging it into a conflist, stripping it out again,
 * and turning a single-plugin .conf into a conflist. Directory-level
 * decisions (which file is active, what to write) are in installplan.h. */
#ifndef NG_CONFLIST_H
#define NG_CONFLIST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

#define NG_PLUGIN_TYPE   "boxxkite-netguard"
/* Top-level key of a conflist the installer generated from a .conf; its
 * value names the source file. libcni ignores unknown top-level keys and
 * never passes them to plugins. */
#define NG_GENERATED_KEY "netguard.boxxkite.io/generated-from"
/* Largest config file or entry we read: real ones are a few KiB. */
#define NG_CONF_MAX      ((size_t)1024 * 1024)

/* Parses our plugin entry (the text of a mounted ConfigMap key) and checks
 * its shape: an object whose type is ours, without the keys a runtime sets
 * itself (name, cniVersion, prevResult, runtimeConfig), which would be
 * silently overwritten. Code 7 on error; *out is a new reference. */
int ng_entry_parse(const char *text, size_t len, json_t **out, struct ng_err *err);

/* Validates the entry exactly as the plugin will see it from libcni: the
 * entry plus the list's name and cniVersion, through ng_config_parse. A
 * refusal here is one the plugin would make on every ADD. */
int ng_entry_validate(const json_t *entry, const char *name, const char *cni_version, struct ng_err *err);

/* Parses a config file's text (duplicate keys refused: Go keeps the last,
 * jansson would too, but a file that says two things is not one to edit). */
int ng_conf_parse_text(const char *text, size_t len, json_t **out, struct ng_err *err);

/* Checks a conflist the way the runtimes read one: an object with a string
 * name and cniVersion and a non-empty plugins array of objects, each with a
 * string type. `file` names it in messages. */
int ng_conflist_check(const json_t *list, const char *file, struct ng_err *err);

bool ng_is_our_plugin(const json_t *plugin);
/* How many entries of ours the conflist's plugins hold. */
size_t ng_conflist_count_ours(const json_t *list);

/* Merges `entry` into `list`: validates the entry against the list, then
 * either leaves the list alone (*changed = false) when it already holds
 * exactly one entry of ours, equal to `entry`, after the primary plugin
 * (index 1 or later: another chained installer appending after us must not
 * start a rewrite war), or removes every entry of ours and appends `entry`
 * last. Every other key and plugin is kept as it was, in order. *out is a
 * new reference (a copy, also when unchanged). Returns 0, -1 with err, or
 * NG_ENTRY_REFUSED with err when it is `entry` itself the plugin would
 * refuse (so a caller can fall back to an entry it accepted before). */
#define NG_ENTRY_REFUSED (-2)
int ng_conflist_merge(const json_t *list, const char *file, const json_t *entry, json_t **out, bool *changed,
		      struct ng_err *err);

/* A copy of `list` without our entries; *removed counts them. NULL when
 * out of memory. */
json_t *ng_conflist_strip(const json_t *list, size_t *removed);

/* Converts a single-plugin config (a .conf or .json file) into a conflist
 * the way libcni's ConfListFromConf does ({cniVersion, name, plugins:
 * [conf]}), marks it as generated from `source`, and appends `entry`.
 * Returns as ng_conflist_merge. */
int ng_conf_to_conflist(const json_t *conf, const char *source, const json_t *entry, json_t **out,
			struct ng_err *err);

/* The file text we write: two-space indent, keys in their original order,
 * newline-terminated. NULL when out of memory; free() it. */
char *ng_conf_dump(const json_t *j, size_t *len);

#endif
