/* The installer's own log: one JSON line on stderr per event, in the shape
 * of the decision log ({"ts","level","msg","plugin","component"}), for
 * people and log pipelines reading the DaemonSet pod's log. Its own file so
 * that the watch loop (watch.c) and the commands (install.c) share it
 * without including each other. */
#ifndef NG_SAY_H
#define NG_SAY_H

void ng_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));       /* level info */
void ng_say_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));  /* level warn */
void ng_say_error(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* level error */

#endif
