#!/usr/bin/env python3
"""Checks deploy/: check.py DEPLOY_DIR [BINARY] [--sandbox FILE]
           check.py --rendered FILE --host-conf DIR --host-bin DIR

Prints one row per check and ends with "N passed, N failed"; exit status 1
when any failed. What it holds the manifests to:

- every YAML file reads (PyYAML, yamlload.py: a key given twice fails; the
  Helm chart in helm/ is left to helm.sh, which compares its renderings
  with the kustomizations'), and
  every object's field names and value types are those of the Kubernetes
  models (k8sfields.py, python3-kubernetes), patches included; so do the
  YAML examples of deploy/README.md;
- the default NetworkPolicy (network-policy.yaml) selects exactly
  app=sandbox, lists both policy types, and never allows 0.0.0.0/0 or ::/0:
  no such ipBlock, and no rule without peers (an egress rule with no `to`,
  or an ingress rule with no `from`, allows every address);
- its storage rule is still an explicit CHANGEME placeholder;
- no file holds two NetworkPolicies (the default and the permissive opt-in
  each in its own file), the opt-in exists, selects app=sandbox plus an
  opt-in label, and is not part of the kustomization;
- the DaemonSets (install, uninstall) run on Linux nodes only, tolerate
  every taint, are system-node-critical, mount the host's conf and bin dirs
  where their install/watch steps look; install runs in an init step and
  watches in the main container;
- deploy/uninstall/ is a kustomization too, and sets the image exactly as
  deploy/kustomization.yaml does (one image for both DaemonSets);
- with --sandbox: the sandbox example runs under Pod Security `restricted`
  (its namespace enforces it; no container keeps NET_RAW);
- with --rendered: the output of `kubectl kustomize` for an overlay (both
  DaemonSets) mounts exactly the given host dirs, consistently;
- the agent's RBAC (base/rbac.yaml) is exactly: pods get/list/watch,
  pods/status patch, events create, in the core group, bound to the
  DaemonSet's ServiceAccount; and its container gets NODE_NAME from
  spec.nodeName (the watch's field selector);
- with BINARY: the ConfigMap's plugin entry is refused as shipped (its
  CHANGEME placeholders) and accepted once they are filled in, by the
  plugin's own validation (`install --dry-run`).
"""

import argparse
import ipaddress
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from k8sfields import check_fragment, check_object  # noqa: E402
from podsecurity import namespace_findings, restricted_findings  # noqa: E402
from yamlload import YamlError, load_all  # noqa: E402

DEFAULT = "network-policy.yaml"
PERMISSIVE = "network-policy-permissive-optin.yaml"

results = []


def check(label, ok, why=""):
    results.append(ok)
    print(f"  {'ok  ' if ok else 'FAIL'}  {label}" + ("" if ok or not why else f"\n        {why}"))


def load_dir(d):
    """{relative path: [documents]} for every .yaml under d."""
    docs = {}
    for root, dirs, files in os.walk(d):
        # The Helm chart's files are templates, not manifests: helm.sh
        # holds their renderings to the kustomizations' (checked here).
        if root == d and "helm" in dirs:
            dirs.remove("helm")
        for f in sorted(files):
            if f.endswith((".yaml", ".yml")):
                p = os.path.join(root, f)
                rel = os.path.relpath(p, d)
                try:
                    with open(p, encoding="utf-8") as fh:
                        docs[rel] = [x for x in load_all(fh.read(), rel) if x is not None]
                    check(f"{rel} reads", True)
                except YamlError as e:
                    check(f"{rel} reads", False, str(e))
                    docs[rel] = []
    return docs


def check_fields(docs):
    """Every object of every file against the Kubernetes models."""
    for rel, ds in docs.items():
        why = [w for i, d in enumerate(ds) for w in check_object(d, f"{rel}#{i + 1}")]
        check(f"{rel}: field names and types are the Kubernetes API's", not why, "\n        ".join(why))


# The README's YAML examples are fragments; each is read as the first of
# these whose fields it uses (a Container's securityContext, a PodSpec...).
FRAGMENT_KINDS = ("V1Container", "V1PodSpec", "V1PodSecurityContext")


def check_readme(d):
    path = os.path.join(d, "README.md")
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    blocks = re.findall(r"^```ya?ml\n(.*?)^```", text, re.M | re.S)
    check("README.md has YAML examples", bool(blocks))
    for n, block in enumerate(blocks, 1):
        where = f"README.md yaml block {n}"
        try:
            ds = [x for x in load_all(block, where) if x is not None]
        except YamlError as e:
            check(f"{where} reads", False, str(e))
            continue
        why = []
        for doc in ds:
            if isinstance(doc, dict) and "kind" in doc:
                why += check_object(doc, where)
                continue
            tries = [check_fragment(doc, k, where) for k in FRAGMENT_KINDS]
            why += min(tries, key=len) if all(tries) else []
        check(f"{where} reads and its fields are the Kubernetes API's", not why, "; ".join(why))


def kind_of(doc, kind):
    return isinstance(doc, dict) and doc.get("kind") == kind


def everything_cidr(cidr):
    """True when the CIDR covers the whole IPv4 or IPv6 space."""
    try:
        return ipaddress.ip_network(str(cidr).strip(), strict=False).prefixlen == 0
    except ValueError:
        return False


def open_world(policy):
    """Reasons the policy lets a pod reach (or be reached from) anywhere."""
    why = []
    spec = policy.get("spec") or {}
    for direction, peers_key in (("egress", "to"), ("ingress", "from")):
        for i, rule in enumerate(spec.get(direction) or []):
            peers = (rule or {}).get(peers_key)
            if not peers:
                why.append(f"{direction}[{i}] has no `{peers_key}`: it allows every address")
                continue
            for j, peer in enumerate(peers):
                block = (peer or {}).get("ipBlock")
                if block and everything_cidr(block.get("cidr")):
                    why.append(f"{direction}[{i}].{peers_key}[{j}] allows {block.get('cidr')}")
                if peer == {} or (peer and all(v == {} for v in peer.values())):
                    why.append(f"{direction}[{i}].{peers_key}[{j}] is an empty selector: every pod")
    return why


def check_policies(docs):
    per_file = {f: [d for d in ds if kind_of(d, "NetworkPolicy")] for f, ds in docs.items()}
    for f, pols in per_file.items():
        if len(pols) > 1:
            names = ", ".join(str((p.get("metadata") or {}).get("name")) for p in pols)
            check(f"{f}: one NetworkPolicy per file", False,
                  f"holds {len(pols)} ({names}): the default and the permissive opt-in must stay apart")
    if not any(len(p) > 1 for p in per_file.values()):
        check("no file holds two NetworkPolicies", True)

    pols = per_file.get(DEFAULT, [])
    check(f"{DEFAULT} holds the default NetworkPolicy", len(pols) == 1)
    if len(pols) == 1:
        spec = pols[0].get("spec") or {}
        sel = spec.get("podSelector") or {}
        check(f"{DEFAULT}: podSelector is exactly app: sandbox",
              sel == {"matchLabels": {"app": "sandbox"}}, f"podSelector is {sel}")
        types = spec.get("policyTypes") or []
        check(f"{DEFAULT}: both policy types (default deny in and out)",
              sorted(types) == ["Egress", "Ingress"], f"policyTypes is {types}")
        why = open_world(pols[0])
        check(f"{DEFAULT}: never allows 0.0.0.0/0 or ::/0", not why, "; ".join(why))
        cidrs = [str(((p or {}).get("ipBlock") or {}).get("cidr"))
                 for r in spec.get("egress") or [] for p in (r or {}).get("to") or []
                 if (p or {}).get("ipBlock")]
        check(f"{DEFAULT}: the storage rule is an explicit CHANGEME placeholder",
              any("CHANGEME" in c for c in cidrs), f"ipBlock cidrs: {cidrs}")
        ports = [p.get("port") for r in spec.get("ingress") or [] for p in (r or {}).get("ports") or []]
        check(f"{DEFAULT}: ingress only to port 8080", ports == [8080], f"ports: {ports}")
        dns = [p.get("port") for r in spec.get("egress") or [] for p in (r or {}).get("ports") or []
               if p.get("port") == 53]
        check(f"{DEFAULT}: egress to DNS (UDP and TCP 53)", len(dns) == 2, f"DNS ports: {dns}")

    opt = per_file.get(PERMISSIVE, [])
    check(f"{PERMISSIVE} exists, in its own file", len(opt) == 1)
    if len(opt) == 1:
        labels = ((opt[0].get("spec") or {}).get("podSelector") or {}).get("matchLabels") or {}
        check(f"{PERMISSIVE}: selects app: sandbox AND an opt-in label",
              labels.get("app") == "sandbox" and len(labels) >= 2, f"matchLabels: {labels}")


def check_node_scope(docs):
    """The taint permission narrowed at admission: a ValidatingAdmissionPolicy
    for Node updates by exactly the installer's ServiceAccount (Deny), its
    own node only (the bound token's node name), our taint only."""
    f = os.path.join("base", "rbac.yaml")
    sa = [x for x in docs.get(f, []) if kind_of(x, "ServiceAccount")]
    pol = [x for x in docs.get(f, []) if kind_of(x, "ValidatingAdmissionPolicy")]
    bind = [x for x in docs.get(f, []) if kind_of(x, "ValidatingAdmissionPolicyBinding")]
    check(f"{f}: one ServiceAccount, one ValidatingAdmissionPolicy and its binding",
          len(sa) == 1 and len(pol) == 1 and len(bind) == 1)
    if not (len(sa) == 1 and len(pol) == 1 and len(bind) == 1):
        return
    user = "system:serviceaccount:%s:%s" % (sa[0]["metadata"].get("namespace"), sa[0]["metadata"].get("name"))
    spec = pol[0].get("spec") or {}
    conds = " ".join(c.get("expression", "") for c in spec.get("matchConditions") or [])
    check(f"{f}: the policy matches the installer's ServiceAccount ({user})", f"'{user}'" in conds, conds)
    rules = (spec.get("matchConstraints") or {}).get("resourceRules") or []
    check(f"{f}: the policy covers every update of a Node",
          any(r.get("resources") == ["nodes"] and "UPDATE" in (r.get("operations") or []) and
              r.get("apiGroups") == [""] for r in rules), f"resourceRules {rules}")
    vals = " ".join(v.get("expression", "") for v in spec.get("validations") or [])
    vals += " ".join(v.get("expression", "") for v in spec.get("variables") or [])
    check(f"{f}: the policy refuses another node and any change but the netguard.boxxkite.io/not-ready taint",
          "authentication.kubernetes.io/node-name" in vals and "object.metadata.name" in vals and
          "netguard.boxxkite.io/not-ready" in vals and "labels" in vals and spec.get("failurePolicy") == "Fail",
          vals[:300])
    b = bind[0].get("spec") or {}
    check(f"{f}: the binding enforces it (Deny)",
          b.get("policyName") == pol[0]["metadata"].get("name") and b.get("validationActions") == ["Deny"], f"{b}")


def check_kustomization(docs, d):
    k = [x for x in docs.get("kustomization.yaml", []) if kind_of(x, "Kustomization")]
    check("kustomization.yaml is a Kustomization", len(k) == 1)
    if len(k) != 1:
        return
    res = k[0].get("resources") or []
    missing = [r for r in res if not os.path.exists(os.path.join(d, r))]
    check("kustomization: every resource exists", not missing, f"missing: {missing}")
    check("kustomization: the NetworkPolicies are not applied with the installer",
          DEFAULT not in res and PERMISSIVE not in res, f"resources: {res}")
    base = [x for x in docs.get(os.path.join("base", "kustomization.yaml"), []) if kind_of(x, "Kustomization")]
    bres = (base[0].get("resources") or []) if len(base) == 1 else None
    check("kustomization lists exactly base/kustomization.yaml's files",
          bres is not None and res == [f"base/{r}" for r in bres], f"deploy/: {res}; base/: {bres}")
    u = [x for x in docs.get(os.path.join("uninstall", "kustomization.yaml"), []) if kind_of(x, "Kustomization")]
    check("uninstall/kustomization.yaml is a Kustomization of the uninstall DaemonSet",
          len(u) == 1 and (u[0].get("resources") or []) == ["daemonset.yaml"],
          f"resources: {[x.get('resources') for x in u]}")

    def image(kz):
        return [i for i in (kz[0].get("images") or []) if i.get("name") == "boxxkite-netguard"] if kz else None
    imgs = {"deploy/": image(k), "base/": image(base), "uninstall/": image(u)}
    check("deploy/, base/ and uninstall/ kustomizations set the same boxxkite-netguard image",
          len(imgs["deploy/"] or []) == 1 and all(v == imgs["deploy/"] for v in imgs.values()),
          "; ".join(f"{n}: {v}" for n, v in imgs.items()))


def container_mounts(c, vols):
    """{mountPath: hostPath} for the container's hostPath mounts."""
    return {m.get("mountPath"): (vols.get(m.get("name")) or {}).get("path")
            for m in c.get("volumeMounts") or [] if m.get("name") in vols}


def check_agent_probes(f, agent, vols, host_conf, host_bin):
    """The probes ask where --listen listens: /readyz for readiness,
    /healthz for startup and liveness, on 127.0.0.1 when it listens there;
    with --listen=$(HOST_IP):PORT (HOST_IP the downward API's status.hostIP)
    they name no host, so the kubelet asks the pod's IP, which for a
    hostNetwork pod is the node's. Realistic timeouts; a named container
    port; the dirs /readyz inspects are the host's CNI dirs."""
    args = [str(a) for a in agent.get("args") or []]
    flags = dict(a[2:].split("=", 1) for a in args if a.startswith("--") and "=" in a)
    host, _, port = flags.get("listen", "127.0.0.1:9617").rpartition(":")
    env = {e.get("name"): e for e in agent.get("env") or []}
    want_host = host
    if host == "$(HOST_IP)":
        src = ((env.get("HOST_IP") or {}).get("valueFrom") or {}).get("fieldRef") or {}
        check(f"{f}: agent HOST_IP is the node's IP (downward API status.hostIP)",
              src.get("fieldPath") == "status.hostIP", f"env HOST_IP: {env.get('HOST_IP')}")
        want_host = None
    probes = {k: agent.get(k) or {} for k in ("startupProbe", "readinessProbe", "livenessProbe")}
    paths = {"startupProbe": "/healthz", "readinessProbe": "/readyz", "livenessProbe": "/healthz"}
    for k, pr in probes.items():
        g = pr.get("httpGet") or {}
        check(f"{f}: agent {k} is {paths[k]} on its --listen address ({host}:{port})",
              g.get("path") == paths[k] and str(g.get("port")) == port and g.get("host") == want_host,
              f"{k} {g}, --listen {host}:{port}")
        check(f"{f}: agent {k} allows a loaded node 2 s or more (timeoutSeconds)",
              int(pr.get("timeoutSeconds") or 1) >= 2, f"{k} timeoutSeconds {pr.get('timeoutSeconds')}")
    st = probes["startupProbe"]
    check(f"{f}: agent startupProbe gives it a minute or more before liveness counts",
          int(st.get("periodSeconds") or 10) * int(st.get("failureThreshold") or 3) >= 60, f"startupProbe {st}")
    ports = [p for p in agent.get("ports") or [] if p.get("name") == "metrics"]
    check(f"{f}: agent has a container port named metrics, the --listen port",
          len(ports) == 1 and str(ports[0].get("containerPort")) == port, f"ports {agent.get('ports')}")
    mounts = container_mounts(agent, vols)
    check(f"{f}: agent --cni-bin-dir/--cni-conf-dir are the mounted host dirs",
          mounts.get(flags.get("cni-bin-dir")) == host_bin and
          mounts.get(flags.get("cni-conf-dir")) == host_conf,
          f"args {args}, mounts {mounts}")


TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


def check_token(f, spec):
    """No API token but where it is used: the pod does not automount one,
    and only the kubectl steps (the taint) and the agent (its pod watch:
    per-session grants, Events, the enforced condition) mount the
    projected token."""
    check(f"{f}: no ServiceAccount token mounted by default (automountServiceAccountToken: false)",
          spec.get("automountServiceAccountToken") is False,
          f"automountServiceAccountToken: {spec.get('automountServiceAccountToken')}")
    projected = {v.get("name") for v in spec.get("volumes") or []
                 if any("serviceAccountToken" in x for x in (v.get("projected") or {}).get("sources") or [])}
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        has = any(m.get("name") in projected or m.get("mountPath") == TOKEN_DIR for m in c.get("volumeMounts") or [])
        kubectl = (c.get("command") or [None])[0] == "kubectl"
        uses = kubectl or c.get("name") == "agent"
        check(f"{f}: {c.get('name')}: " + ("mounts the token (kubectl taint)" if kubectl
                                           else "mounts the token (the agent's pod watch)" if uses
                                           else "mounts no token"),
              has == uses, f"mounts {[m.get('mountPath') for m in c.get('volumeMounts') or []]}")


HOST_DIRS = ("/etc/cni/net.d", "/opt/cni/bin")


AGENT_RULES = sorted([("", "pods", "get"), ("", "pods", "list"), ("", "pods", "watch"),
                      ("", "pods/status", "patch"), ("", "events", "create")])


def check_agent_rbac(docs, f=os.path.join("base", "rbac.yaml")):
    """The agent's ClusterRole grants exactly AGENT_RULES, bound to the
    DaemonSet's ServiceAccount; the agent knows its node's name."""
    objs = docs.get(f, [])
    roles = [d for d in objs if kind_of(d, "ClusterRole") and d["metadata"]["name"] == "boxxkite-netguard-agent"]
    got = sorted((g, r, v) for role in roles for rule in role.get("rules") or []
                 for g in rule.get("apiGroups") or [] for r in rule.get("resources") or []
                 for v in rule.get("verbs") or [])
    check(f"{f}: the agent's ClusterRole is pods get/list/watch, pods/status patch, events create, nothing more",
          len(roles) == 1 and got == AGENT_RULES and
          not any(rule.get("resourceNames") or rule.get("nonResourceURLs") for role in roles
                  for rule in role.get("rules") or []), f"rules: {got}")
    binds = [d for d in objs if kind_of(d, "ClusterRoleBinding") and
             (d.get("roleRef") or {}).get("name") == "boxxkite-netguard-agent"]
    check(f"{f}: bound to the ServiceAccount boxxkite-netguard",
          len(binds) == 1 and [(s_.get("kind"), s_.get("name")) for s_ in binds[0].get("subjects") or []] ==
          [("ServiceAccount", "boxxkite-netguard")])
    ds = [d for d in docs.get(os.path.join("base", "daemonset.yaml"), []) if kind_of(d, "DaemonSet")]
    agent = [c for d in ds for c in d["spec"]["template"]["spec"].get("containers", []) if c.get("name") == "agent"]
    env = {e.get("name"): e for c in agent for e in c.get("env") or []}
    check("base/daemonset.yaml: the agent's NODE_NAME is spec.nodeName (downward API)",
          ((env.get("NODE_NAME") or {}).get("valueFrom") or {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName")


def check_daemonset(docs, f, verb, host_conf=HOST_DIRS[0], host_bin=HOST_DIRS[1]):
    ds = [x for x in docs.get(f, []) if kind_of(x, "DaemonSet")]
    check(f"{f} holds a DaemonSet", len(ds) == 1)
    if len(ds) != 1:
        return
    check_pod_spec(f, ds[0], verb, host_conf, host_bin)


def check_pod_spec(f, ds, verb, host_conf, host_bin, agent=True):
    spec = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
    check(f"{f}: runs on Linux nodes only (nodeSelector kubernetes.io/os: linux)",
          (spec.get("nodeSelector") or {}).get("kubernetes.io/os") == "linux",
          f"nodeSelector: {spec.get('nodeSelector')}")
    check(f"{f}: tolerates every taint", {"operator": "Exists"} in (spec.get("tolerations") or []),
          f"tolerations: {spec.get('tolerations')}")
    check(f"{f}: priorityClassName system-node-critical",
          spec.get("priorityClassName") == "system-node-critical")
    check(f"{f}: hostNetwork (needs no pod network)", spec.get("hostNetwork") is True)
    check_token(f, spec)
    vols = {v.get("name"): v.get("hostPath") for v in spec.get("volumes") or [] if v.get("hostPath")}
    host = sorted(v.get("path") for v in vols.values())
    want = sorted([host_conf, host_bin])
    if verb == "install" and agent:  # and the agent's state dir and the runtimes' namespaces
        want = sorted([host_conf, host_bin, "/run/boxxkite-netguard", "/run/netns"])
    check(f"{f}: hostPath volumes are the CNI conf and bin dirs ({host_conf}, {host_bin})"
          + (", state dir, netns" if verb == "install" and agent else ""),
          host == want, f"hostPaths: {host}")

    def steps(containers):
        out = []
        for c in containers or []:
            args = [str(a) for a in c.get("args") or []]
            if args and args[0] in ("install", "uninstall"):
                out.append((c, args))
        return out

    def paths_match(c, args):
        mounts = container_mounts(c, vols)
        flags = dict(a[2:].split("=", 1) for a in args if a.startswith("--") and "=" in a)
        return (mounts.get(flags.get("conf-dir")) == host_conf and
                mounts.get(flags.get("bin-dir")) == host_bin)

    init = steps(spec.get("initContainers"))
    main = steps(spec.get("containers"))
    check(f"{f}: an init step runs `{verb}` once",
          len(init) == 1 and init[0][1][0] == verb and "--watch" not in init[0][1],
          f"init steps: {[a for _, a in init]}")
    for c, args in init + main:
        check(f"{f}: {c.get('name')}: --conf-dir/--bin-dir are the mounted host dirs",
              paths_match(c, args), f"args {args}, mounts {container_mounts(c, vols)}")
    if verb == "install":
        check(f"{f}: the main container watches (install --watch)",
              len(main) == 1 and "--watch" in main[0][1], f"main: {[a for _, a in main]}")
        agents = [c for c in spec.get("containers") or [] if (c.get("args") or [None])[0] == "agent"]
        if not agent:
            others = [c.get("name") for c in spec.get("containers") or [] if c not in [m for m, _ in main]]
            check(f"{f}: no agent container, nothing but the watch step (resolve mode only)",
                  not agents and not others, f"containers besides watch: {others}")
            agents = None
        caps = ((agents[0].get("securityContext") or {}).get("capabilities") or {}) if agents else {}
        if agents is not None:
            check(f"{f}: one agent container, ALL dropped, only NET_ADMIN, NET_RAW and SYS_ADMIN added",
                  len(agents) == 1 and caps.get("drop") == ["ALL"] and
                  sorted(caps.get("add") or []) == ["NET_ADMIN", "NET_RAW", "SYS_ADMIN"],
                  f"agents {len(agents)}, capabilities {caps}")
        if agents is not None and len(agents) == 1:
            check_agent_probes(f, agents[0], vols, host_conf, host_bin)
        ru = ((ds.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate") or {}
        check(f"{f}: rolling update one node at a time, no surge (maxUnavailable 1, maxSurge 0)",
              str(ru.get("maxUnavailable")) == "1" and str(ru.get("maxSurge")) == "0", f"rollingUpdate: {ru}")
        entry = [a.split("=", 1)[1] for _, args in init + main for a in args if a.startswith("--entry=")]
        cm_mounts = [m.get("mountPath") for c, _ in init + main for m in c.get("volumeMounts") or []
                     if m.get("name") in {v.get("name") for v in spec.get("volumes") or [] if v.get("configMap")}]
        check(f"{f}: --entry lies in the mounted ConfigMap",
              entry and all(any(e.startswith(m.rstrip("/") + "/") for m in cm_mounts) for e in entry),
              f"entries {entry}, ConfigMap mounts {cm_mounts}")


def entry_text(docs):
    cms = [x for x in docs.get(os.path.join("base", "configmap.yaml"), []) if kind_of(x, "ConfigMap")]
    if len(cms) != 1:
        return None
    return (cms[0].get("data") or {}).get("netguard.json")


def fill_placeholders(entry):
    """The entry with each CHANGEME value replaced by a plausible one."""
    samples = {"servers": "10.96.0.10", "allow": "tcp://10.20.0.0/16:443", "sources": "10.244.0.0/16"}

    def walk(v, key=None):
        if isinstance(v, dict):
            return {k: walk(x, k) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x, key) for x in v]
        if isinstance(v, str) and "CHANGEME" in v:
            return samples.get(key, v)
        return v
    return walk(entry)


def check_entry(docs, binary):
    text = entry_text(docs)
    check("base/configmap.yaml holds the plugin entry (netguard.json)", isinstance(text, str))
    if not isinstance(text, str):
        return
    try:
        entry = json.loads(text)
    except ValueError as e:
        check("the entry is JSON", False, str(e))
        return
    if not binary:
        return
    with tempfile.TemporaryDirectory(prefix="ng-manifests.") as t:
        conf, bindir = os.path.join(t, "net.d"), os.path.join(t, "bin")
        os.mkdir(conf, 0o755)
        os.mkdir(bindir, 0o755)
        with open(os.path.join(conf, "10-kindnet.conflist"), "w") as fh:
            json.dump({"cniVersion": "0.3.1", "name": "kindnet", "plugins": [{"type": "ptp"}]}, fh)

        def run(e):
            p = os.path.join(t, "entry.json")
            with open(p, "w") as fh:
                json.dump(e, fh)
            return subprocess.run([binary, "install", "--dry-run", "--entry", p, "--conf-dir", conf,
                                   "--bin-dir", bindir], capture_output=True, text=True)
        r = run(entry)
        check("the shipped entry is refused by the plugin's validation (CHANGEME)",
              r.returncode == 1 and "CHANGEME" in r.stderr, r.stderr.strip()[-300:])
        r = run(fill_placeholders(entry))
        check("the entry with its placeholders filled in is accepted",
              r.returncode == 0, r.stderr.strip()[-300:])


def check_sandbox(path):
    """The sandbox example: Pod Security `restricted`, enforced by its namespace."""
    rel = os.path.basename(path)
    try:
        with open(path, encoding="utf-8") as fh:
            ds = [x for x in load_all(fh.read(), rel) if x is not None]
    except (OSError, YamlError) as e:
        check(f"{rel} reads", False, str(e))
        return
    check_fields({rel: ds})
    nss = [d for d in ds if kind_of(d, "Namespace")]
    pods = [d for d in ds if kind_of(d, "Pod")]
    check(f"{rel}: holds its namespace and a pod", len(nss) == 1 and pods)
    for ns in nss:
        why = namespace_findings(ns)
        check(f"{rel}: namespace enforces, warns and audits Pod Security restricted", not why, "; ".join(why))
    for pod in pods:
        why = restricted_findings(pod)
        check(f"{rel}: pod {pod['metadata'].get('name')} passes Pod Security restricted (no NET_RAW)",
              not why, "\n        ".join(why))


def check_rendered(paths, host_conf, host_bin, agent=True):
    """`kubectl kustomize` output of an overlay: its install and its
    uninstall kustomization, one file each."""
    rel = " + ".join(os.path.basename(p) for p in paths)
    ds = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as fh:
                ds += [x for x in load_all(fh.read(), path) if x is not None]
        except (OSError, YamlError) as e:
            check(f"{os.path.basename(path)} reads", False, str(e))
            return
    check_fields({rel: ds})
    sets = {(d.get("metadata") or {}).get("name"): d for d in ds if kind_of(d, "DaemonSet")}
    for name, verb in (("boxxkite-netguard", "install"), ("boxxkite-netguard-uninstall", "uninstall")):
        check(f"{rel}: renders DaemonSet {name}", name in sets)
        if name in sets:
            check_pod_spec(f"{rel} {name}", sets[name], verb, host_conf, host_bin, agent)
    images = sorted({c.get("image") for d in sets.values()
                     for c in (d["spec"]["template"]["spec"].get("initContainers") or []) +
                     d["spec"]["template"]["spec"].get("containers", [])
                     if (c.get("args") or [""])[0] in ("install", "uninstall")})
    check(f"{rel}: install and uninstall run the same image", len(images) == 1, f"images: {images}")


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("deploy", nargs="?")
    ap.add_argument("binary", nargs="?")
    ap.add_argument("--sandbox")
    ap.add_argument("--rendered", action="append")
    ap.add_argument("--host-conf", default=HOST_DIRS[0])
    ap.add_argument("--host-bin", default=HOST_DIRS[1])
    ap.add_argument("--no-agent", action="store_true")
    a = ap.parse_args()
    if a.rendered:
        check_rendered(a.rendered, a.host_conf, a.host_bin, not a.no_agent)
    elif a.deploy:
        docs = load_dir(a.deploy)
        check_fields(docs)
        check_readme(a.deploy)
        check_policies(docs)
        check_kustomization(docs, a.deploy)
        check_node_scope(docs)
        check_daemonset(docs, os.path.join("base", "daemonset.yaml"), "install")
        check_daemonset(docs, os.path.join("uninstall", "daemonset.yaml"), "uninstall")
        check_agent_rbac(docs)
        check_entry(docs, a.binary)
    else:
        ap.print_usage(sys.stderr)
        return 2
    if a.sandbox:
        check_sandbox(a.sandbox)
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
