#!/usr/bin/env python3
"""Compares what deploy/helm/ renders with what the kustomizations render:

  helmdiff.py HELM.yaml KUSTOMIZE.yaml... [--without KIND/NAME]...

HELM.yaml is `helm template` output; the KUSTOMIZE files are `kubectl
kustomize` outputs, taken together, less the objects --without names. The
two sides must hold the same objects (by apiVersion, kind, namespace, name)
with equal contents, compared as data: key order, quoting and comments do
not count, and the plugin entry (ConfigMap data netguard.json) is compared
as JSON, since the chart writes it from YAML values. Prints every
difference by object and path; exit status 1 when there is one.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from yamlload import YamlError, load_all  # noqa: E402


def objects(paths, without=()):
    out = {}
    for p in paths:
        with open(p, encoding="utf-8") as f:
            docs = load_all(f.read(), p)
        for d in docs:
            if not isinstance(d, dict):
                continue
            m = d.get("metadata") or {}
            if f"{d.get('kind')}/{m.get('name')}" in without:
                continue
            key = (d.get("apiVersion"), d.get("kind"), m.get("namespace"), m.get("name"))
            if key in out:
                sys.exit(f"helmdiff.py: {p} holds {key} twice")
            if d.get("kind") == "ConfigMap" and "netguard.json" in (d.get("data") or {}):
                d = dict(d, data=dict(d["data"], **{"netguard.json": json.loads(d["data"]["netguard.json"])}))
            out[key] = d
    return out


def named(v):
    """A list of objects each with a distinct name."""
    return (isinstance(v, list) and v and all(isinstance(x, dict) and "name" in x for x in v)
            and len({x["name"] for x in v}) == len(v))


def diffs(a, b, path=""):
    """Paths where a and b differ (a: the chart's, b: the kustomization's)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            p = f"{path}.{k}"
            if k not in a:
                yield f"{p}: only the kustomization has it ({json.dumps(b[k])[:120]})"
            elif k not in b:
                yield f"{p}: only the chart has it ({json.dumps(a[k])[:120]})"
            else:
                yield from diffs(a[k], b[k], p)
    elif named(a) and named(b):
        # Lists merged by name (volumes, mounts, env, containers): a
        # strategic-merge patch moves the elements it names to the front,
        # and their order means nothing, except that init steps run in
        # order (and containers are listed so).
        if path.endswith(("initContainers", "containers")) and [x["name"] for x in a] != [y["name"] for y in b]:
            yield f"{path}: chart order {[x['name'] for x in a]}, kustomization {[y['name'] for y in b]}"
        yield from diffs({x["name"]: x for x in a}, {y["name"]: y for y in b}, path)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from diffs(x, y, f"{path}[{i}]")
    elif a != b or type(a) is not type(b):
        yield f"{path or '.'}: chart {json.dumps(a)[:120]}, kustomization {json.dumps(b)[:120]}"


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("helm")
    ap.add_argument("kustomize", nargs="+")
    ap.add_argument("--without", action="append", default=[])
    a = ap.parse_args()
    try:
        h, k = objects([a.helm]), objects(a.kustomize, set(a.without))
    except (OSError, YamlError, ValueError) as e:
        print(f"helmdiff.py: {e}")
        return 1
    out = []
    for key in sorted(set(h) | set(k), key=str):
        name = "/".join(str(x) for x in key[1:] if x)
        if key not in k:
            out.append(f"{name}: only the chart renders it")
        elif key not in h:
            out.append(f"{name}: only the kustomization renders it")
        else:
            out += [f"{name} {d}" for d in diffs(h[key], k[key])]
    for line in out:
        print(line)
    if not out:
        print(f"the same {len(h)} objects")
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
