/* The table comment of a pod's tables (policy/podcomment.c). */
#ifndef NG_PODCOMMENT_H
#define NG_PODCOMMENT_H

#include "policy/policy.h"

/* Sets out->pod ("ns/name"), out->comment and out->container_id from the
 * pod's identity (NULL: an unknown pod, "-/-"). */
void ng_policy_describe_pod(const struct ng_podref *pod, struct ng_policy *out);

/* Reads the pod identity back from a table comment written by this plugin
 * ("boxxkite-netguard V: container ID if IF pod NS/NAME", or 0.1's "...: pod
 * NS/NAME container ID12"): "" for each part the comment does not hold
 * (0.1's has no interface; a long pod name is cut). netns is left NULL.
 * Returns false when the comment is not ours. */
bool ng_podref_from_comment(const char *comment, struct ng_podref *out);

#endif
