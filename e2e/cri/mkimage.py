#!/usr/bin/python3
"""Build a docker-archive tar (what `docker save` writes) holding one layer
with a static pause program and busybox-static, so the CRI test never pulls.

usage: mkimage.py OUT.tar REPO:TAG PAUSE_BINARY BUSYBOX_BINARY
"""
import hashlib
import io
import json
import platform
import sys
import tarfile

GOARCH = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "ppc64le": "ppc64le",
          "s390x": "s390x", "riscv64": "riscv64", "i686": "386"}


def add_file(tar, name, data, mode=0o755):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    info.mtime = 0
    tar.addfile(info, io.BytesIO(data))


def add_dir(tar, name, mode=0o755):
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = mode
    info.mtime = 0
    tar.addfile(info)


def add_link(tar, name, target):
    info = tarfile.TarInfo(name)
    info.type = tarfile.SYMTYPE
    info.linkname = target
    info.mode = 0o777
    info.mtime = 0
    tar.addfile(info)


def layer(pause, busybox):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for d in ("bin", "etc", "proc", "sys", "dev", "tmp", "run"):
            add_dir(tar, d, 0o1777 if d == "tmp" else 0o755)
        add_file(tar, "pause", pause)
        add_file(tar, "bin/busybox", busybox)
        for applet in ("sh", "nc", "sleep", "cat", "echo", "ip", "true"):
            add_link(tar, "bin/" + applet, "busybox")
        add_file(tar, "etc/passwd", b"root:x:0:0:root:/:/bin/sh\n", 0o644)
        add_file(tar, "etc/group", b"root:x:0:\n", 0o644)
    return buf.getvalue()


def main():
    out, ref, pause_path, busybox_path = sys.argv[1:5]
    with open(pause_path, "rb") as f:
        pause = f.read()
    with open(busybox_path, "rb") as f:
        busybox = f.read()
    blob = layer(pause, busybox)
    diff_id = "sha256:" + hashlib.sha256(blob).hexdigest()
    config = json.dumps({
        "architecture": GOARCH.get(platform.machine(), platform.machine()),
        "os": "linux",
        "created": "1970-01-01T00:00:00Z",
        "config": {"Entrypoint": ["/pause"], "Env": ["PATH=/bin"], "WorkingDir": "/"},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created": "1970-01-01T00:00:00Z", "created_by": "e2e/cri/mkimage.py"}],
    }, sort_keys=True).encode()
    config_name = hashlib.sha256(config).hexdigest() + ".json"
    layer_name = diff_id[len("sha256:"):] + "/layer.tar"
    manifest = json.dumps([{"Config": config_name, "RepoTags": [ref], "Layers": [layer_name]}]).encode()
    with tarfile.open(out, "w", format=tarfile.USTAR_FORMAT) as tar:
        add_file(tar, config_name, config, 0o644)
        add_dir(tar, layer_name.split("/")[0])
        add_file(tar, layer_name, blob, 0o644)
        add_file(tar, "manifest.json", manifest, 0o644)


if __name__ == "__main__":
    main()
