#include "spec/cni_args.h"

#include <stdio.h>
#include <string.h>

#define ARGS_MAX 8192

static int parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "True")) {
		*out = true;
		return 0;
	}
	if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "False")) {
		*out = false;
		return 0;
	}
	return -1;
}

static int store(char *dst, size_t len, const char *key, const char *v, struct ng_err *err)
{
	if (strlen(v) >= len)
		return ng_fail(err, NG_E_ENV, "CNI_ARGS: %s is longer than %zu characters", key, len - 1);
	snprintf(dst, len, "%s", v);
	return 0;
}

int ng_cni_args_parse(const char *s, struct ng_cni_args *out, struct ng_err *err)
{
	char buf[ARGS_MAX], unknown[128] = "";
	char *pair, *next;

	memset(out, 0, sizeof(*out));
	if (!s || !*s)
		return 0;
	if (strlen(s) >= sizeof(buf))
		return ng_fail(err, NG_E_ENV, "CNI_ARGS: longer than %d bytes", ARGS_MAX - 1);
	snprintf(buf, sizeof(buf), "%s", s);

	for (pair = buf; pair; pair = next) {
		char *eq, *key, *val;
		int rc = 0;

		next = strchr(pair, ';');
		if (next)
			*next++ = '\0';
		if (!*pair)
			continue; /* tolerate "a=b;" */
		eq = strchr(pair, '=');
		if (!eq || eq == pair || strchr(eq + 1, '='))
			return ng_fail(err, NG_E_ENV, "CNI_ARGS: invalid pair \"%.64s\" (want KEY=VALUE)",
				       pair);
		*eq = '\0';
		key = pair;
		val = eq + 1;
		if (!strcmp(key, "K8S_POD_NAMESPACE"))
			rc = store(out->pod_namespace, sizeof(out->pod_namespace), key, val, err);
		else if (!strcmp(key, "K8S_POD_NAME"))
			rc = store(out->pod_name, sizeof(out->pod_name), key, val, err);
		else if (!strcmp(key, "K8S_POD_UID"))
			rc = store(out->pod_uid, sizeof(out->pod_uid), key, val, err);
		else if (!strcmp(key, "K8S_POD_INFRA_CONTAINER_ID"))
			rc = store(out->infra_container_id, sizeof(out->infra_container_id), key, val, err);
		else if (!strcmp(key, "IgnoreUnknown")) {
			if (parse_bool(val, &out->ignore_unknown) < 0)
				return ng_fail(err, NG_E_ENV,
					       "CNI_ARGS: IgnoreUnknown must be 1, 0, true or false");
		} else if (!unknown[0]) {
			snprintf(unknown, sizeof(unknown), "%.127s", key);
		}
		if (rc < 0)
			return -1;
	}
	if (unknown[0] && !out->ignore_unknown)
		return ng_fail(err, NG_E_ENV, "CNI_ARGS: unknown key \"%s\" (and IgnoreUnknown is not set)",
			       unknown);
	return 0;
}
