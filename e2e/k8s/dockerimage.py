#!/usr/bin/python3
"""The image a Dockerfile's final stage describes, as a docker-archive tar
(what `ctr images import` reads), without a container engine: there is none
on these machines, and nothing can be pulled.

usage: dockerimage.py DOCKERFILE CONTEXT OUT.tar REF

Only what deploy/Dockerfile's final stage uses is played, and anything else
there is an error (so a change to the Dockerfile is noticed here, never
silently left out of the image):

  FROM scratch                       an empty image
  COPY --from=STAGE SRC DEST         SRC is a path in STAGE: under STAGE's
                                     WORKDIR it is the same path under
                                     CONTEXT, where the same Makefile ran
                                     (`make static` on this machine, in
                                     place of the builder stage's RUN)
  USER, ENTRYPOINT, CMD (JSON form), ENV K=V, WORKDIR, LABEL K=V

The layer holds exactly the copied files (no skeleton: the runtime makes
the mount points), dated 1970, so the same binary gives the same image id.
"""
import json
import os
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mkimage import archive, layer  # noqa: E402


def instructions(path):
    """(KEYWORD, ARGUMENTS) per instruction: comments dropped, continuation
    lines joined."""
    out, cur = [], ""
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not cur and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if line.endswith("\\"):
                cur += line[:-1] + " "
                continue
            cur += line
            word, _, rest = cur.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
            cur = ""
    return out


def stages(instrs):
    """[(name, [instructions])] per FROM."""
    out = []
    for kw, args in instrs:
        if kw == "FROM":
            parts = args.split()
            name = parts[2] if len(parts) == 3 and parts[1].upper() == "AS" else None
            out.append({"from": parts[0], "name": name, "body": []})
        elif out:
            out[-1]["body"].append((kw, args))
        elif kw != "ARG":
            sys.exit(f"dockerimage.py: {kw} before the first FROM")
    return out


def workdir(stage):
    wd = "/"
    for kw, args in stage["body"]:
        if kw == "WORKDIR":
            wd = os.path.join(wd, args)
    return wd


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    dockerfile, context, out, ref = sys.argv[1:]
    st = stages(instructions(dockerfile))
    if not st:
        sys.exit("dockerimage.py: no FROM")
    final, named = st[-1], {s["name"]: s for s in st[:-1] if s["name"]}
    if final["from"] != "scratch":
        sys.exit(f"dockerimage.py: the final stage is FROM {final['from']}, not scratch: nothing to play it from")
    items, cfg, wd = [], {}, "/"
    for kw, args in final["body"]:
        if kw == "COPY":
            words = shlex.split(args)
            frm = [w for w in words if w.startswith("--from=")]
            rest = [w for w in words if not w.startswith("--")]
            if len(frm) != 1 or len(rest) != 2 or frm[0][7:] not in named:
                sys.exit(f"dockerimage.py: only COPY --from=STAGE SRC DEST is played: COPY {args}")
            src, dest = rest
            base = workdir(named[frm[0][7:]]).rstrip("/") + "/"
            if not src.startswith(base):
                sys.exit(f"dockerimage.py: {src} is not under the builder's WORKDIR {base}")
            local = os.path.join(context, src[len(base):])
            if not os.path.isfile(local):
                sys.exit(f"dockerimage.py: {local} does not exist (the builder stage makes it: run that here first)")
            items.append(f"{os.path.join(wd, dest)}={local}")
        elif kw in ("ENTRYPOINT", "CMD"):
            try:
                cfg[kw.capitalize()] = json.loads(args)
            except ValueError:
                sys.exit(f"dockerimage.py: {kw} in shell form needs a shell, which scratch has not: {args}")
        elif kw == "USER":
            cfg["User"] = args
        elif kw == "ENV":
            k, _, v = args.partition("=")
            cfg.setdefault("Env", []).append(f"{k}={v}")
        elif kw == "WORKDIR":
            wd = os.path.join(wd, args)
            cfg["WorkingDir"] = wd
        elif kw == "LABEL":
            k, _, v = args.partition("=")
            cfg.setdefault("Labels", {})[k] = v.strip('"')
        else:
            sys.exit(f"dockerimage.py: {kw} in the final stage is not played here: {kw} {args}")
    archive(out, ref, layer(items, skeleton=False), cfg, created_by="e2e/k8s/dockerimage.py " + os.path.relpath(dockerfile, context))


if __name__ == "__main__":
    main()
