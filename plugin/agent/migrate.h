/* At start, before anything reads stateDir: 0.2's records become 0.3's
 * (state/migrate.h), so that the pods an upgraded agent finds keep being
 * served. 0.2 recorded no link facts; they are read from each running pod
 * once, here, and recorded: the last time the pod's present is taken for
 * the truth (logged per pod). */
#ifndef NG_AGENT_MIGRATE_H
#define NG_AGENT_MIGRATE_H

/* Migrates every record under stateDir/decisions; returns how many. */
unsigned ng_agent_migrate(const char *state_dir);

#endif
