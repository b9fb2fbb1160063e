#!/usr/bin/python3
"""Build a docker-archive tar (what `docker save` writes, what `ctr images
import` reads) of one layer, so the cluster's pods never pull: no registry
can be reached from the test world.

usage: mkimage.py OUT.tar REF ENTRYPOINT ITEM...
  ITEM  DEST=SRC     the file SRC, at DEST in the image (mode 0755)
        DEST@TARGET  a symlink DEST -> TARGET

The layer also has the directories a container expects (/bin /etc /proc /sys
/dev /tmp /run /var) and a root-only /etc/passwd and /etc/group. Everything is
dated 1970, so the same inputs give the same image id.
"""
import hashlib
import io
import json
import platform
import sys
import tarfile

GOARCH = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "ppc64le": "ppc64le",
          "s390x": "s390x", "riscv64": "riscv64", "i686": "386"}
DIRS = ("bin", "etc", "proc", "sys", "dev", "tmp", "run", "var", "var/run")


def entry(name, kind=tarfile.REGTYPE, mode=0o755, data=b"", link=""):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.mtime = 0
    info.linkname = link
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    return info, io.BytesIO(data) if kind == tarfile.REGTYPE else None


def layer(items, skeleton=True):
    """One layer's tar: ITEMs, after the skeleton (the directories and the
    root-only passwd and group) unless skeleton is False (FROM scratch)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        if skeleton:
            for d in DIRS:
                tar.addfile(*entry(d, tarfile.DIRTYPE, 0o1777 if d == "tmp" else 0o755))
            tar.addfile(*entry("etc/passwd", mode=0o644, data=b"root:x:0:0:root:/:/bin/sh\n"))
            tar.addfile(*entry("etc/group", mode=0o644, data=b"root:x:0:\n"))
        for item in items:
            if "=" in item:
                dest, src = item.split("=", 1)
                with open(src, "rb") as f:
                    tar.addfile(*entry(dest.lstrip("/"), data=f.read()))
            elif "@" in item:
                dest, target = item.split("@", 1)
                tar.addfile(*entry(dest.lstrip("/"), tarfile.SYMTYPE, 0o777, link=target))
            else:
                sys.exit("mkimage.py: bad item %r (DEST=SRC or DEST@TARGET)" % item)
    return buf.getvalue()


def archive(out, ref, blob, run_config, created_by="e2e/k8s/mkimage.py"):
    """Writes the docker-archive OUT: one layer BLOB, the image config's
    "config" part RUN_CONFIG (Entrypoint, Cmd, User, Env...), named REF."""
    diff_id = "sha256:" + hashlib.sha256(blob).hexdigest()
    config = json.dumps({
        "architecture": GOARCH.get(platform.machine(), platform.machine()),
        "os": "linux",
        "created": "1970-01-01T00:00:00Z",
        "config": run_config,
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created": "1970-01-01T00:00:00Z", "created_by": created_by}],
    }, sort_keys=True).encode()
    config_name = hashlib.sha256(config).hexdigest() + ".json"
    layer_name = diff_id[len("sha256:"):] + "/layer.tar"
    manifest = json.dumps([{"Config": config_name, "RepoTags": [ref], "Layers": [layer_name]}]).encode()
    with tarfile.open(out, "w", format=tarfile.GNU_FORMAT) as tar:
        tar.addfile(*entry(config_name, mode=0o644, data=config))
        tar.addfile(*entry(layer_name.split("/")[0], tarfile.DIRTYPE))
        tar.addfile(*entry(layer_name, mode=0o644, data=blob))
        tar.addfile(*entry("manifest.json", mode=0o644, data=manifest))


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out, ref, entrypoint = sys.argv[1:4]
    archive(out, ref, layer(sys.argv[4:]), {"Entrypoint": [entrypoint], "Env": ["PATH=/bin"], "WorkingDir": "/"})


if __name__ == "__main__":
    main()
