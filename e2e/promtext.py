#!/usr/bin/python3
"""A strict parser of the Prometheus text exposition format (0.0.4), stdlib
only, for the e2e tests of `boxxkite-netguard stats --prometheus`.

  promtext.py [FILE]     (default: stdin)

Prints {"types": {family: type}, "help": {family: text}, "samples":
[{"name", "labels", "value"}]} as JSON and exits 0, or prints "line N: why"
and exits 1. Stricter than Prometheus itself where the format leaves room:
  - every line ends with "\\n" (so does the input);
  - "# HELP NAME TEXT" and "# TYPE NAME TYPE": at most one of each per
    family, both before the family's first sample; TYPE one of counter,
    gauge, histogram, summary, untyped; HELP escapes only \\\\ and \\n;
  - every sample belongs to a family declared by TYPE (histogram and summary
    families also own NAME_bucket/_sum/_count), and a family's samples are
    contiguous;
  - NAME{LABEL="VALUE",...} VALUE [TIMESTAMP]: metric names
    [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]* not starting
    with "__", no label twice, values escape only \\\\ \\" and \\n; single
    spaces between the parts; the value a float (or NaN, +Inf, -Inf), the
    timestamp an integer;
  - no two samples with the same name and label set; counters not negative.
"""
import json
import math
import re
import sys

METRIC = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")


class Bad(Exception):
    pass


def unescape(s, allowed):
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            if i + 1 >= len(s) or s[i + 1] not in allowed:
                raise Bad("bad escape %r" % s[i:i + 2])
            out.append("\n" if s[i + 1] == "n" else s[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def parse_value(s):
    if s in ("NaN", "+Inf", "-Inf", "Inf", "+inf", "-inf"):
        return float(s.replace("Inf", "inf"))
    if not FLOAT.fullmatch(s):
        raise Bad("value %r is not a number" % s)
    return float(s)


def parse_labels(s, i):
    """s[i] is '{'; returns (labels, index after '}')."""
    labels = {}
    i += 1
    while True:
        if i < len(s) and s[i] == "}":
            return labels, i + 1
        m = LABEL.match(s, i)
        if not m:
            raise Bad("bad label name at column %d" % (i + 1))
        name = m.group(0)
        if name.startswith("__"):
            raise Bad("reserved label name %r" % name)
        if name in labels:
            raise Bad("label %r twice" % name)
        i = m.end()
        if s[i:i + 2] != '="':
            raise Bad("want =\" after label %r" % name)
        i += 2
        j = i
        while j < len(s) and s[j] != '"':
            if s[j] == "\n":
                raise Bad("raw newline in label value")
            j += 2 if s[j] == "\\" else 1
        if j >= len(s):
            raise Bad("unterminated label value")
        labels[name] = unescape(s[i:j], '\\"n')
        i = j + 1
        if i < len(s) and s[i] == ",":
            i += 1
        elif i >= len(s) or s[i] != "}":
            raise Bad("want , or } after label %r" % name)


def family_of(name, types):
    if name in types:
        return name
    for suffix in ("_bucket", "_sum", "_count"):
        base = name[: -len(suffix)]
        if name.endswith(suffix) and types.get(base) in ("histogram", "summary"):
            return base
    return None


def parse(text):
    if text and not text.endswith("\n"):
        raise Bad("the input does not end with a newline")
    types, helps, samples, seen = {}, {}, [], set()
    done, current = set(), None  # families closed, family being read
    for n, line in enumerate(text.split("\n")[:-1], 1):
        try:
            if line == "":
                continue
            if line.startswith("#"):
                parts = line.split(" ", 3)
                if len(parts) >= 2 and parts[1] in ("HELP", "TYPE"):
                    if len(parts) < 4 or parts[0] != "#":
                        raise Bad("want '# %s NAME TEXT'" % parts[1])
                    name, rest = parts[2], parts[3]
                    if not METRIC.fullmatch(name):
                        raise Bad("bad metric name %r" % name)
                    if name in done or name == current:
                        raise Bad("%s for %s after its samples" % (parts[1], name))
                    table = helps if parts[1] == "HELP" else types
                    if name in table:
                        raise Bad("second %s for %s" % (parts[1], name))
                    if parts[1] == "TYPE":
                        if rest not in TYPES:
                            raise Bad("unknown type %r" % rest)
                        types[name] = rest
                    else:
                        helps[name] = unescape(rest, "\\n")
                continue
            m = METRIC.match(line)
            if not m:
                raise Bad("bad metric name")
            name, i = m.group(0), m.end()
            labels = {}
            if i < len(line) and line[i] == "{":
                labels, i = parse_labels(line, i)
            rest = line[i:]
            if not rest.startswith(" ") or "  " in rest or rest.endswith(" "):
                raise Bad("want NAME[{LABELS}] VALUE [TIMESTAMP], single spaces")
            fields = rest[1:].split(" ")
            if len(fields) > 2:
                raise Bad("trailing text %r" % " ".join(fields[2:]))
            value = parse_value(fields[0])
            if len(fields) == 2 and not re.fullmatch(r"-?[0-9]+", fields[1]):
                raise Bad("timestamp %r is not an integer" % fields[1])
            fam = family_of(name, types)
            if fam is None:
                raise Bad("sample %s has no TYPE line before it" % name)
            if fam != current:
                if fam in done:
                    raise Bad("samples of %s are not contiguous" % fam)
                if current is not None:
                    done.add(current)
                current = fam
            if types[fam] == "counter" and (value < 0 or math.isnan(value)):
                raise Bad("counter %s is %r" % (name, value))
            key = (name, tuple(sorted(labels.items())))
            if key in seen:
                raise Bad("duplicate sample %s %s" % (name, labels))
            seen.add(key)
            samples.append({"name": name, "labels": labels, "value": value})
        except Bad as e:
            raise Bad("line %d: %s: %r" % (n, e, line))
    return {"types": types, "help": helps, "samples": samples}


def main():
    text = open(sys.argv[1]).read() if len(sys.argv) > 1 else sys.stdin.read()
    try:
        print(json.dumps(parse(text)))
    except Bad as e:
        print(str(e))
        sys.exit(1)


if __name__ == "__main__":
    main()
