/* Fuzz target: pod annotations (the runtimeConfig object) against a fixed
 * valid config, then selection. The input is the annotations JSON object,
 * or, when it does not parse as JSON, the value of the egress annotation. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/annotations.h"
#include "policy/select.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char conf[] =
	"{\"cniVersion\":\"1.0.0\",\"capabilities\":{\"io.kubernetes.cri.pod-annotations\":true},"
	"\"enforce\":{\"namespaces\":[\"sandboxes\"],\"optInAnnotation\":true},"
	"\"egress\":{\"allow\":[\"10.20.0.0/16:443\"],\"envelope\":[\"10.0.0.0/8:400-500\","
	"\"*.example.com:443\",\"udp://[fd00::/48]:53\",\"api.internal.test:443\"]}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ng_config cfg;
	static json_t *base;
	json_t *root, *ann, *rc;
	struct ng_annotations a;
	struct ng_err err;
	char reason[512];
	bool enforced, audit;

	if (!base) {
		base = json_loads(conf, 0, NULL);
		if (!base || ng_config_parse(base, &cfg, &err) != 0)
			__builtin_trap();
	}
	ann = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (!ann) {
		ann = json_object();
		json_object_set_new(ann, "netguard.boxxkite.io/egress",
				    json_stringn((const char *)data, size));
	}
	root = json_deep_copy(base);
	rc = json_object();
	json_object_set_new(rc, "io.kubernetes.cri.pod-annotations", ann);
	json_object_set_new(root, "runtimeConfig", rc);
	if (ng_annotations_parse(root, &cfg, &a, &err) == 0)
		ng_select(&cfg, size % 2 ? "sandboxes" : "default", &a, &enforced, &audit, reason,
			  sizeof(reason), &err);
	ng_annotations_free(&a);
	json_decref(root);
	return 0;
}
