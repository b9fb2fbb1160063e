/* Shared by the installer's unit tests: the conflists real primaries write
 * (fixtures/conflists/, beside this file) and our entry, parsed. */
#ifndef NG_TEST_CONFLIST_FIXTURES_H
#define NG_TEST_CONFLIST_FIXTURES_H

#include "testutil.h"

#include <libgen.h>

#include "state/confdir.h" // IWYU pragma: export
#include "install/conflist.h"
#include "install/installplan.h" // IWYU pragma: export
#include "install/watch.h"       // IWYU pragma: export

__attribute__((unused)) static const char *const LISTS[] = {
	"10-containerd-net.conflist", "10-kindnet.conflist", "10-flannel.conflist",
	"10-calico.conflist",         "05-cilium.conflist",  NULL,
};

__attribute__((unused)) static char *fixture_text(const char *name, size_t *len)
{
	char file[4096], path[8192];
	FILE *f;
	char *buf = malloc(1 << 20);

	snprintf(file, sizeof(file), "%s", __FILE__);
	snprintf(path, sizeof(path), "%s/fixtures/conflists/%s", dirname(file), name);
	f = fopen(path, "r");
	if (!f || !buf)
		fail_msg("cannot read fixture %s", path);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

__attribute__((unused)) static json_t *fixture(const char *name)
{
	size_t len;
	char *t = fixture_text(name, &len);
	json_t *j = tu_json(t);

	free(t);
	return j;
}

__attribute__((unused)) static json_t *entry(void)
{
	size_t len;
	char *t = fixture_text("entry.json", &len);
	struct ng_err err = {0};
	json_t *e = NULL;

	if (ng_entry_parse(t, len, &e, &err) < 0)
		fail_msg("entry.json refused: %s", err.msg);
	free(t);
	return e;
}

#endif
