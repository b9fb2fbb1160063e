"""What Pod Security `restricted` (the Kubernetes Pod Security Standards)
refuses in a pod, for the sandbox example: the sandbox must run under it,
and in particular without NET_RAW (deploy/README "The sandbox pods
themselves"). Not the admission controller itself: the checks a reviewer
reads off the Standards page, one line per finding.
"""

ALLOWED_ADD = {"NET_BIND_SERVICE"}
SECCOMP_OK = {"RuntimeDefault", "Localhost"}


def restricted_findings(pod):
    """Findings (strings) that Pod Security `restricted` would refuse."""
    out = []
    spec = pod.get("spec") or {}
    name = (pod.get("metadata") or {}).get("name")
    psc = spec.get("securityContext") or {}
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(key):
            out.append(f"pod {name}: {key}")
    for v in spec.get("volumes") or []:
        if "hostPath" in v:
            out.append(f"pod {name}: hostPath volume {v.get('name')}")
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        where = f"pod {name} container {c.get('name')}"
        sc = c.get("securityContext") or {}
        caps = sc.get("capabilities") or {}
        if sc.get("privileged"):
            out.append(f"{where}: privileged")
        if sc.get("allowPrivilegeEscalation") is not False:
            out.append(f"{where}: allowPrivilegeEscalation is not false")
        if "ALL" not in (caps.get("drop") or []):
            out.append(f"{where}: capabilities.drop lacks ALL (NET_RAW stays, as runtimes grant it)")
        extra = set(caps.get("add") or []) - ALLOWED_ADD
        if extra:
            out.append(f"{where}: adds capabilities {sorted(extra)}")
        if sc.get("runAsNonRoot", psc.get("runAsNonRoot")) is not True:
            out.append(f"{where}: runAsNonRoot is not true")
        if sc.get("runAsUser", psc.get("runAsUser")) == 0:
            out.append(f"{where}: runAsUser 0")
        seccomp = (sc.get("seccompProfile") or psc.get("seccompProfile") or {}).get("type")
        if seccomp not in SECCOMP_OK:
            out.append(f"{where}: seccompProfile is {seccomp}, not RuntimeDefault/Localhost")
    return out


def namespace_findings(ns):
    """Findings for a Namespace that should enforce `restricted`."""
    labels = (ns.get("metadata") or {}).get("labels") or {}
    out = []
    for mode in ("enforce", "warn", "audit"):
        v = labels.get(f"pod-security.kubernetes.io/{mode}")
        if v != "restricted":
            out.append(f"namespace {ns['metadata'].get('name')}: pod-security.kubernetes.io/{mode} is {v}")
    return out
