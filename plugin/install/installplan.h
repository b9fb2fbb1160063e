/* What the installer should do to a CNI conf dir, decided from a listing of
 * it (names and bytes) without touching the disk, so every case is a unit
 * test. install.c reads the directory and applies the plan.
 *
 * How runtimes choose (containerd's go-cni and CRI-O's ocicni, both on
 * libcni's ConfFiles): every file of the dir whose extension is .conf,
 * .conflist or .json (dotfiles included), sorted bytewise by name; the
 * first one is the pod network. A .conflist is read as a list, anything
 * else as a single plugin turned into a one-element list.
 *
 * The plan:
 * - active config is a .conflist: our entry is merged into it in place
 *   (its original bytes are first saved to a side file, so uninstall can
 *   restore them exactly);
 * - active config is a .conf/.json: it is left untouched, and a conflist
 *   holding it plus our entry is written under a name that sorts just before
 *   it ("10-bridge.conf" -> "10-bridge-boxxkite-netguard.conflist": '-' is
 *   0x2d, '.' is 0x2e), marked with NG_GENERATED_KEY. Uninstall deletes it.
 *   (The same basename with .conflist would NOT be chosen: "x.conf" sorts
 *   before "x.conflist".)
 * - generated conflists that are no longer the right one are removed (a
 *   stale copy of an old primary must never stay first in line).
 * Writes come before removals, so at every step the first file in line is
 * one that holds our entry, or the primary as it was. */
#ifndef NG_INSTALLPLAN_H
#define NG_INSTALLPLAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "base/vec.h"

#define NG_FILENAME_MAX   255
#define NG_BACKUP_PREFIX  ".boxxkite-netguard."
#define NG_BACKUP_SUFFIX  ".orig"
#define NG_DERIVED_SUFFIX "-boxxkite-netguard.conflist"

enum ng_file_kind { NG_FILE_REGULAR, NG_FILE_SYMLINK, NG_FILE_OTHER };

struct ng_dir_file {
	char *name;
	enum ng_file_kind kind;
	char *text; /* regular files only (NULL otherwise) */
	size_t len;
	unsigned mode; /* permission bits */
};
typedef NG_VEC(struct ng_dir_file) ng_dir_listing;

enum ng_act_op { NG_ACT_WRITE, NG_ACT_REMOVE };

struct ng_action {
	enum ng_act_op op;
	char *name;
	char *text; /* WRITE: the bytes */
	size_t len;
	unsigned mode;  /* WRITE: permission bits */
	char what[200]; /* for the log line */
};

struct ng_plan {
	NG_VEC(struct ng_action) acts;
	char active[NG_FILENAME_MAX + 1]; /* install: the file runtimes will read */
	bool entry_was_present;           /* install: active file already had an entry of ours */
	bool entry_refused;               /* install failed: the plugin would refuse the entry itself */
};

/* Side file holding the original bytes of `file` (never a config name). */
int ng_backup_name(const char *file, char *out, size_t n);
/* Generated conflist's name for a single-plugin primary `file`. */
int ng_derived_name(const char *file, char *out, size_t n);

/* err->code NG_E_TRY_AGAIN when the dir holds no network config yet (the
 * primary CNI has not written one): the caller may wait. Any other error
 * means nothing may be written. */
int ng_plan_install(const ng_dir_listing *dir, const json_t *entry, struct ng_plan *plan, struct ng_err *err);
/* Removes our entry from every conflist (restoring the saved bytes when
 * they say the same thing), every generated conflist, every side file and
 * any temp file a killed installer left. */
int ng_plan_uninstall(const ng_dir_listing *dir, struct ng_plan *plan, struct ng_err *err);

/* Adds a file to a listing (copies name and text); -1 when out of memory. */
int ng_listing_add(ng_dir_listing *dir, const char *name, enum ng_file_kind kind, const char *text,
		   size_t len, unsigned mode);
void ng_listing_free(ng_dir_listing *dir);
void ng_plan_free(struct ng_plan *plan);

#endif
