#!/usr/bin/python3
"""readme_ruleset.py: the README's ruleset examples against what ADD installs.

The README ("The ruleset") shows the inet table and the packet-socket guard
as `nft list ruleset` shows them in an enforced pod, abridged by hand. The
golden file (test/unit/nft/golden/ruleset.txt, pinned by test_snapshot to
what the renderer sends for the fixture pod) is what ADD really installs.
Checked both ways, for each table:
  - every chain, set and named object (counter, limit) of the golden is
    named in the README's block (an abridged block still names each);
  - every `chain NAME`, `set NAME`, `counter NAME` and `counter name "NAME"`
    the block shows exists in the golden (no stale name);
  - every rule comment the block quotes (`comment "..."`, none abridged with
    "...") is a comment of the golden's rules, word for word.
Exit 0 when both tables match; otherwise one line per difference.
Run by make lint; scripts/readme_ruleset.py [README GOLDEN].
"""
import re
import sys

readme = sys.argv[1] if len(sys.argv) > 1 else "README.md"
golden = sys.argv[2] if len(sys.argv) > 2 else "test/unit/nft/golden/ruleset.txt"


def golden_names(lines, prefix):
    chains, sets, objects, comments = set(), set(), set(), set()
    for l in lines:
        if not l.startswith(prefix):
            continue
        l = l[len(prefix):]
        if prefix == "" and l.startswith("netdev: "):
            continue
        m = re.match(r"chain (\S+) (hook|rule)", l)
        if m:
            chains.add(m.group(1))
            c = re.search(r'comment "([^"]*)"$', l)
            if c and m.group(2) == "rule":
                comments.add(c.group(1))
        m = re.match(r"set (\S+) ", l)
        if m:
            sets.add(m.group(1))
        m = re.match(r"object (\S+) ", l)
        if m:
            objects.add(m.group(1))
    return chains, sets, objects, comments


def block(text, opening):
    """The fenced block whose first line is `opening`."""
    m = re.search(r"```\n" + re.escape(opening) + r"(.*?)\n```", text, re.S)
    if not m:
        raise SystemExit("readme_ruleset: no block starting %r in %s" % (opening, readme))
    return opening + m.group(1)


def check(label, text, g):
    chains, sets, objects, comments = g
    bad = []
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    for kind, names in (("chain", chains), ("set", sets), ("object", objects)):
        for n in sorted(names):
            if n not in words:
                bad.append("%s: the golden's %s %s is not in the README's block" % (label, kind, n))
    # A chain the block shows: "chain NAME {" or "chain A, B ..." at a line's
    # start; mld_report_N beyond the fixture's one group are the same
    # chain, repeated per group.
    shown = set()
    for l in text.splitlines():
        m = re.match(r"\s*chain ([A-Za-z_][A-Za-z0-9_]*(?:, [A-Za-z_][A-Za-z0-9_]*)*)", l)
        if m:
            shown |= set(m.group(1).split(", "))
    shown = {n for n in shown if not (re.fullmatch(r"mld_report_\d+", n) and "mld_report_1" in chains)}
    for n in sorted(shown - chains):
        bad.append("%s: the README shows chain %s, which ADD does not install" % (label, n))
    for n in sorted(set(re.findall(r"\bset ([A-Za-z_][A-Za-z0-9_]*)", text)) - sets):
        bad.append("%s: the README shows set %s, which ADD does not install" % (label, n))
    counters = set(re.findall(r"\bcounter ([A-Za-z_][A-Za-z0-9_]*) \{", text))
    counters |= set(re.findall(r'\bcounter name "([^"]+)"', text))
    for n in sorted(counters - objects):
        bad.append("%s: the README shows counter %s, which ADD does not install" % (label, n))
    for c in sorted(set(re.findall(r'comment "([^"]*)"', text))):
        if "..." in c or "<" in c or c.startswith("boxxkite-netguard "):
            continue  # abridged by hand, an element's, or the table's own comment
        # "N records ...": one chain per group, the fixture has one.
        if c not in comments and not re.fullmatch(r"[2-9] records of the pod's own groups, no byte more: accept", c):
            bad.append("%s: the README quotes comment %r, which no rule ADD installs carries" % (label, c))
    return bad


def main():
    text = open(readme).read()
    lines = open(golden).read().splitlines()
    bad = check("inet table", block(text, "table inet boxxkite_netguard {"), golden_names(lines, ""))
    bad += check("packet-socket guard", block(text, "table netdev boxxkite_netguard {"),
                 golden_names(lines, "netdev: "))
    for b in bad:
        print(b)
    print("readme_ruleset: %s" % ("the README's ruleset examples match what ADD installs" if not bad
                                  else "%d difference(s)" % len(bad)))
    return 1 if bad else 0


sys.exit(main())
