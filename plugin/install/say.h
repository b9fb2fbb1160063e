/* The installer's own log: one timestamped line on stderr per event, for
 * people reading the DaemonSet pod's log. Its own file so that the watch
 * loop (watch.c) and the commands (install.c) share it without including
 * each other. */
#ifndef NG_SAY_H
#define NG_SAY_H

void ng_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
