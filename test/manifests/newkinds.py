"""Field trees of the kinds deploy/ uses that are newer than Debian's
python3-kubernetes models (22.6: Kubernetes 1.22), transcribed from
k8s.io/api v0.33 (admissionregistration/v1/types.go) and, for the
PodMonitor example, the Prometheus operator's monitoring.coreos.com/v1
CRD (the fields the example uses). A tree maps each JSON key to its type:
"str", "int", "bool", "any" (free-form), another tree, or a one-element
list of one. k8sfields.check_object walks them as it walks the models.
"""

SELECTOR = {"matchLabels": "any", "matchExpressions": "any"}
META = "metadata"  # checked by the V1ObjectMeta model
NAMED_RULE = {"resourceNames": ["str"], "operations": ["str"], "apiGroups": ["str"],
              "apiVersions": ["str"], "resources": ["str"], "scope": "str"}
MATCH = {"namespaceSelector": SELECTOR, "objectSelector": SELECTOR, "resourceRules": [NAMED_RULE],
         "excludeResourceRules": [NAMED_RULE], "matchPolicy": "str"}

KINDS = {
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"): {
        "spec": {
            "paramKind": {"apiVersion": "str", "kind": "str"},
            "matchConstraints": MATCH,
            "validations": [{"expression": "str", "message": "str", "reason": "str",
                             "messageExpression": "str"}],
            "failurePolicy": "str",
            "auditAnnotations": [{"key": "str", "valueExpression": "str"}],
            "matchConditions": [{"name": "str", "expression": "str"}],
            "variables": [{"name": "str", "expression": "str"}],
        },
    },
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"): {
        "spec": {
            "policyName": "str",
            "paramRef": {"name": "str", "namespace": "str", "selector": SELECTOR,
                         "parameterNotFoundAction": "str"},
            "matchResources": MATCH,
            "validationActions": ["str"],
        },
    },
    ("monitoring.coreos.com/v1", "PodMonitor"): {
        "spec": {
            "jobLabel": "str",
            "podTargetLabels": ["str"],
            "selector": SELECTOR,
            "namespaceSelector": {"any": "bool", "matchNames": ["str"]},
            "podMetricsEndpoints": [{"port": "str", "path": "str", "scheme": "str", "interval": "str",
                                     "scrapeTimeout": "str", "honorLabels": "bool",
                                     "relabelings": "any", "metricRelabelings": "any"}],
        },
    },
}

TYPES = {"str": str, "int": int, "bool": bool}


def walk_tree(value, tree, path, out):
    """Problems of `value` against `tree` appended to `out`."""
    if tree == "any":
        return
    if isinstance(tree, str):
        ok = isinstance(value, TYPES[tree]) and not (tree == "int" and isinstance(value, bool))
        if not ok:
            out.append(f"{path}: wants {tree}, has {type(value).__name__}")
        return
    if isinstance(tree, list):
        if not isinstance(value, list):
            out.append(f"{path}: wants a list, has {type(value).__name__}")
            return
        for i, x in enumerate(value):
            walk_tree(x, tree[0], f"{path}[{i}]", out)
        return
    if not isinstance(value, dict):
        out.append(f"{path}: wants an object, has {type(value).__name__}")
        return
    for k, v in value.items():
        if k not in tree:
            out.append(f"{path}.{k}: no such field")
            continue
        walk_tree(v, tree[k], f"{path}.{k}", out)
