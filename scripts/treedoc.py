#!/usr/bin/python3
"""treedoc.py (run by make lint): HACKING.md's tree is the tree.

HACKING.md's section "The tree" holds code blocks of two kinds of line:

  PATH        description           a section: PATH (a file or a folder/) exists
      NAME NAME ...  # comment      a listing of the folder above: each NAME is
                                    a file (by full name or by stem: `addr` is
                                    addr.c and addr.h), a sub-folder (`lib/`)
                                    or a glob (`fuzz_*.c`), and must exist

A folder with a listing lists all of it: every file and sub-folder in it
appears. Every top-level entry of the tree is a section of its own (or the
first folder of one), and the description of a plugin/ layer starts with
"-> FOLDERS." exactly as scripts/layers.sh lets it include. README.md's
"Layout" block names every plugin/ folder, and each path it names exists.
Exit 1 with one line per difference.
"""
import fnmatch
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
os.chdir(ROOT)
bad = []


def tree():
    """The files of the tree: git's (tracked and not ignored) or, outside a
    clone, the file system's without build/."""
    try:
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], capture_output=True,
                             text=True, check=True).stdout.split("\n")
        files = [f for f in out if f and os.path.exists(f)]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, subs, names in os.walk("."):
            subs[:] = [s for s in subs if s not in (".git", "build", "__pycache__")]
            files += [os.path.relpath(os.path.join(d, n)) for n in names]
    return files


FILES = tree()


def entries(folder):
    """The direct entries of FOLDER ('' for the top): files, and sub-folders
    with a trailing slash."""
    out = set()
    prefix = folder.rstrip("/") + "/" if folder else ""
    for f in FILES:
        if not f.startswith(prefix):
            continue
        rest = f[len(prefix):]
        out.add(rest.split("/", 1)[0] + "/" if "/" in rest else rest)
    return out


def blocks(path, heading):
    """The code blocks of PATH's section HEADING (## level), with line numbers."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, inside, code = [], False, None
    for n, line in enumerate(lines, 1):
        if line.startswith("## "):
            inside = line[3:].strip() == heading
            continue
        if not inside:
            continue
        if line.startswith("```"):
            if code is None:
                code = []
            else:
                out.append(code)
                code = None
        elif code is not None:
            code.append((n, line))
    if not out:
        bad.append(f"{path}: no code block under '## {heading}'")
    return out


def matches(folder, name, present):
    """The entries of FOLDER that NAME stands for."""
    if name.endswith("/"):
        return {name} & present
    return {e for e in present if not e.endswith("/") and
            (e == name or os.path.splitext(e)[0] == name or fnmatch.fnmatch(e, name))}


def layers_table():
    """scripts/layers.sh's table: folder -> the folders it may include."""
    text = open("scripts/layers.sh", encoding="utf-8").read()
    return {m.group(1): set(m.group(2).split()) for m in re.finditer(r'^\s*\[(\w+)\]="([^"]*)"', text, re.M)}


def check_hacking():
    sections = {}  # path -> line
    listed = {}  # folder -> names listed
    current = None
    for block in blocks("HACKING.md", "The tree"):
        for n, line in block:
            if not line.strip():
                continue
            if line.startswith("    "):
                if current is None or not current.endswith("/"):
                    bad.append(f"HACKING.md:{n}: a listing under no folder: {line.strip()}")
                    continue
                for name in line.split("#", 1)[0].split():
                    listed.setdefault(current, []).append((n, name))
                continue
            path = line.split()[0]
            current = path
            sections[path] = n
            is_dir = path.endswith("/")
            if (is_dir and not any(f.startswith(path) for f in FILES)) or (not is_dir and path not in FILES):
                bad.append(f"HACKING.md:{n}: {path} does not exist")
    # Each listed name exists; a listed folder lists all of it.
    for folder, names in listed.items():
        present = entries(folder)
        covered = set()
        for n, name in names:
            got = matches(folder, name, present)
            if not got:
                bad.append(f"HACKING.md:{n}: {folder}{name} does not exist")
            covered |= got
        for e in sorted(present - covered):
            if folder + e not in sections:
                bad.append(f"HACKING.md: {folder}{e} exists but the tree under {folder} does not list it")
    # Every top-level entry has a section.
    tops = {p.split("/", 1)[0] + ("/" if "/" in p else "") for p in sections}
    for e in sorted(entries("") - tops):
        bad.append(f"HACKING.md: {e} exists but the tree does not show it")
    # plugin/'s layers: each folder shown, its arrow as scripts/layers.sh says.
    may = layers_table()
    for e in sorted(entries("plugin")):
        if e.endswith("/") and f"plugin/{e}" not in sections:
            bad.append(f"HACKING.md: plugin/{e} is not in the tree")
    lines = open("HACKING.md", encoding="utf-8").read().split("\n")
    for path, n in sections.items():
        m = re.fullmatch(r"plugin/(\w+)/", path)
        if not m:
            continue
        desc = lines[n - 1][len(path):].strip()
        arrow = re.match(r"->\s*([\w ]*)\.", desc)
        shown = set(arrow.group(1).split()) if arrow else set()
        if m.group(1) not in may:
            bad.append(f"HACKING.md:{n}: {path} is not a layer of scripts/layers.sh")
        elif shown != may[m.group(1)]:
            bad.append(f"HACKING.md:{n}: {path} says it includes '{' '.join(sorted(shown))}', "
                       f"scripts/layers.sh says '{' '.join(sorted(may[m.group(1)]))}'")


def check_readme():
    named = set()
    tops = {e.rstrip("/") for e in entries("")}
    for block in blocks("README.md", "Layout"):
        for n, line in block:
            for path in re.findall(r"(?<![\w/.])((?:[\w.-]+/)+[\w.*<>-]*)", line):
                if "<" in path or "*" in path or path.split("/", 1)[0] not in tops:
                    continue
                named.add(path)
                if not any(f == path or f.startswith(path.rstrip("/") + "/") for f in FILES):
                    bad.append(f"README.md:{n}: {path} does not exist")
    for e in sorted(entries("plugin")):
        if e.endswith("/") and f"plugin/{e}" not in named:
            bad.append(f"README.md: plugin/{e} is not in the Layout")


check_hacking()
check_readme()
for b in bad:
    print(b)
if bad:
    print(f"treedoc: {len(bad)} difference(s) between the docs and the tree")
    sys.exit(1)
print(f"treedoc: HACKING.md's tree and README's Layout match the tree ({len(FILES)} files)")
