"""Field names and value types of Kubernetes objects, checked against the
python3-kubernetes models (Debian's python3-kubernetes).

Each model class (V1DaemonSet, V1PodSpec, ...) lists its fields twice:
`attribute_map` (python name -> the JSON key the API server reads) and
`openapi_types` (python name -> type: a model name, 'list[X]',
'dict(str, X)', 'str', 'int', 'bool', 'object'). Walking an object against
them from its kind down finds what the API server would refuse, or (older
servers, or `kubectl apply --validate=false`) silently drop: a misspelt key
such as `tolerations:` written `toleration:`, a key at the wrong level, a
boolean written as a string. The models are those of the package's
Kubernetes version; a field newer than it is reported, naming the version,
so that it is a decision and not a surprise.
"""

import re

from kubernetes import __version__ as client_version
from kubernetes.client import models

from newkinds import KINDS, walk_tree

# Fields whose model type is 'str' but which the API reads as a Quantity:
# `cpu: 1` is as valid there as `cpu: "1"`.
QUANTITY = {("V1ResourceRequirements", "limits"), ("V1ResourceRequirements", "requests"),
            ("V1ResourceQuotaSpec", "hard"), ("V1EmptyDirVolumeSource", "size_limit")}
# Objects with no model here: checked elsewhere (kustomize reads its own file
# strictly when it renders it).
NOT_API = {"kustomize.config.k8s.io"}


def model_for(api_version, kind):
    """The model class for apiVersion + kind, or None."""
    group, _, version = (api_version or "").rpartition("/")
    prefix = version.capitalize()  # v1 -> V1, v1beta1 -> V1beta1
    name = prefix + (kind or "")
    return getattr(models, name, None) if group not in NOT_API else None


def _type_ok(value, t):
    if t == "str":
        return isinstance(value, str)
    if t == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if t == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if t == "bool":
        return isinstance(value, bool)
    if t == "datetime":
        return isinstance(value, str)
    return True  # 'object': int-or-string and free-form fields


def _walk(value, t, path, owner, out):
    m = re.fullmatch(r"list\[(.+)\]", t)
    if m:
        if not isinstance(value, list):
            out.append(f"{path}: wants a list, has {type(value).__name__}")
            return
        for i, x in enumerate(value):
            _walk(x, m.group(1), f"{path}[{i}]", owner, out)
        return
    m = re.fullmatch(r"dict\(str, (.+)\)", t)
    if m:
        if not isinstance(value, dict):
            out.append(f"{path}: wants a map, has {type(value).__name__}")
            return
        inner = m.group(1)
        for k, x in value.items():
            if not isinstance(k, str):
                out.append(f"{path}: key {k!r} is not a string")
            if inner == "str" and owner in QUANTITY and isinstance(x, (int, float)) and not isinstance(x, bool):
                continue
            _walk(x, inner, f"{path}.{k}", owner, out)
        return
    cls = getattr(models, t, None)
    if cls is not None:
        walk_model(value, cls, path, out)
        return
    if value is None:
        return  # `key:` with no value: null, which the API reads as unset
    if not _type_ok(value, t) and not (owner in QUANTITY and isinstance(value, (int, float))):
        out.append(f"{path}: wants {t}, has {type(value).__name__} {value!r}")


def walk_model(obj, cls, path, out):
    """Appends to out one line per field of obj that cls does not have, or
    whose value has the wrong type; recurses into nested models."""
    if obj is None:
        return
    if not isinstance(obj, dict):
        out.append(f"{path}: wants an object ({cls.__name__}), has {type(obj).__name__}")
        return
    by_key = {v: k for k, v in cls.attribute_map.items()}
    for key, value in obj.items():
        attr = by_key.get(key)
        # A strategic-merge patch's directive (an overlay removing a
        # container: `$patch: delete`; keeping an order), not a field.
        if key == "$patch" and value in ("delete", "replace", "merge") or key.startswith("$setElementOrder/"):
            continue
        if attr is None:
            near = [k for k in by_key if k.lower() == str(key).lower() or k.rstrip("s") == str(key).rstrip("s")]
            hint = f" (did you mean {near[0]}?)" if near else ""
            out.append(f"{path}.{key}: no such field in {cls.__name__}{hint}")
            continue
        _walk(value, cls.openapi_types[attr], f"{path}.{key}", (cls.__name__, attr), out)


def check_object(doc, where):
    """Problems (a list of strings) of one manifest document; a kind with no
    model is itself a problem, except kustomize's own files."""
    if not isinstance(doc, dict):
        return [f"{where}: a document that is not an object"]
    api, kind = doc.get("apiVersion"), doc.get("kind")
    if not api or not kind:
        return [f"{where}: no apiVersion/kind"]
    if api.split("/")[0] in NOT_API:
        return []
    cls = model_for(api, kind)
    if cls is None and (api, kind) in KINDS:
        out = []
        for key, value in doc.items():
            if key in ("apiVersion", "kind"):
                continue
            if key == "metadata":
                walk_model(value, models.V1ObjectMeta, f"{where}:{kind}.metadata", out)
            elif key not in KINDS[(api, kind)]:
                out.append(f"{where}:{kind}.{key}: no such field")
            else:
                walk_tree(value, KINDS[(api, kind)][key], f"{where}:{kind}.{key}", out)
        return out
    if cls is None:
        return [f"{where}: {api} {kind} is not a kind the Kubernetes {client_version} models know"]
    out = []
    walk_model(doc, cls, f"{where}:{kind}", out)
    return out


def check_fragment(doc, cls_name, where):
    """Problems of a fragment (a README snippet) read as a cls_name."""
    out = []
    walk_model(doc, getattr(models, cls_name), f"{where}:{cls_name}", out)
    return out
