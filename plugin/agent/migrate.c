#include "agent/migrate.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/alog.h"
#include "kernel/netns.h"
#include "kernel/peer.h"
#include "state/migrate.h"
#include "state/record.h"

static json_t *load(const char *path)
{
	return json_load_file(path, JSON_REJECT_DUPLICATES, NULL);
}

/* The running pod's link, as its ADD would have read it. */
static void read_link(struct ng_record *r)
{
	char why[256];
	struct ng_err err = {0};
	int fd;

	if (strcmp(r->decision, "enforced") != 0 || ng_netns_open_pod(&r->pod, &fd, &err) != 0)
		return;
	r->have_link = ng_peer_find(fd, r->pod.ifname, &r->link, why, sizeof(why), &err) == 0;
	close(fd);
}

static bool one(const char *state_dir, const char *name)
{
	char path[4600], podpath[4600], key[256];
	struct ng_record r;
	struct ng_err err = {0};
	json_t *dec, *pod;
	bool refused;
	int rc;

	if (!ng_record_name(name, key, sizeof(key), &refused))
		return false;
	snprintf(path, sizeof(path), "%s/" NG_V1_DECISIONS_DIR "/%s", state_dir, name);
	snprintf(podpath, sizeof(podpath), "%s/" NG_PODS_DIR "/%s.json", state_dir, key);
	dec = load(path);
	pod = refused ? NULL : load(podpath);
	if (pod && json_integer_value(json_object_get(pod, "version")) != 1) {
		json_decref(pod); /* already a 0.3 record: this decision is stale */
		json_decref(dec);
		unlink(path);
		return false;
	}
	rc = dec ? ng_migrate_v1(dec, pod, &r, &err) : ng_fail(&err, NG_E_DECODE, "unreadable");
	json_decref(dec);
	json_decref(pod);
	if (rc == 0) {
		read_link(&r);
		rc = ng_record_write(state_dir, &r, true, &err);
		if (rc == 0)
			ng_alog_line("info", "record_migrated", NULL, r.key,
				     r.have_link
					     ? "0.2 record rewritten; its link facts read from the pod once"
					     : "0.2 record rewritten without link facts");
		ng_record_free(&r);
	}
	if (rc < 0)
		ng_alog_line("error", "record_unusable", NULL, key, err.msg);
	unlink(path);
	return rc == 0;
}

unsigned ng_agent_migrate(const char *state_dir)
{
	char dir[4200];
	struct dirent *e;
	unsigned n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/" NG_V1_DECISIONS_DIR, state_dir);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && one(state_dir, e->d_name))
			n++;
	closedir(d);
	if (rmdir(dir) < 0 && errno != ENOENT && errno != ENOTEMPTY)
		ng_alog_line("warning", "record_migrated", NULL, NULL,
			     "cannot remove the 0.2 decisions directory");
	return n;
}
