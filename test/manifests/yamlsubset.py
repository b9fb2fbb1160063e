"""A strict reader for the small YAML subset deploy/ is written in.

Python's standard library has no YAML parser and the tests may not pull one
in, so this reads exactly what our manifests use and refuses everything
else with an error naming the line: a manifest that grows a construct this
does not know fails the test instead of being misread.

Read: documents separated by `---`; comments (`#` at the start or after a
space, outside quotes); block mappings (`key: value`, `key:` + nested
block); block sequences (`- value`, `- key: value` opening a mapping,
`key:` followed by `- ...` at the same indent); plain, 'single' and
"double" quoted scalars; literal block scalars (`|`, `|-`); the empty flow
collections `[]` and `{}`.
Refused: tabs in indentation, anchors (&), aliases (*), tags (!), folded
scalars (>), non-empty flow collections, complex keys (?), directives (%),
duplicate keys, plain scalars over several lines.
Scalars: quoted ones are strings; plain true/false are booleans, null/~
None, decimal integers ints; everything else is a string.
"""

import re


class YamlError(Exception):
    pass


_KEY = re.compile(r"""^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s'"#\-?:,\[\]{}&*!|>%@`][^#]*?|-[^\s#][^#]*?)\s*:(?:\s+|$)(.*)$""")
_INT = re.compile(r"^[-+]?(0|[1-9][0-9]*)$")


def _strip_comment(text):
    """Drops a trailing comment: `#` at the start or after whitespace,
    outside quotes."""
    quote = None
    for i, c in enumerate(text):
        if quote:
            if c == quote and not (quote == '"' and text[i - 1] == "\\"):
                quote = None
        elif c in "'\"" and (i == 0 or text[i - 1] in " \t:-[,"):
            quote = c
        elif c == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[:i].rstrip()
    if quote:
        return None  # an unterminated quote: the caller reports it
    return text.rstrip()


def _unquote(s, lineno):
    if s.startswith('"'):
        if len(s) < 2 or not s.endswith('"'):
            raise YamlError(f"line {lineno}: unterminated double-quoted scalar")
        out, i, body = [], 0, s[1:-1]
        esc = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/"}
        while i < len(body):
            if body[i] == "\\":
                if i + 1 >= len(body) or body[i + 1] not in esc:
                    raise YamlError(f"line {lineno}: unsupported escape in {s}")
                out.append(esc[body[i + 1]])
                i += 2
            elif body[i] == '"':
                raise YamlError(f"line {lineno}: stray quote in {s}")
            else:
                out.append(body[i])
                i += 1
        return "".join(out)
    if len(s) < 2 or not s.endswith("'"):
        raise YamlError(f"line {lineno}: unterminated single-quoted scalar")
    return s[1:-1].replace("''", "'")


def _scalar(s, lineno):
    if s == "":
        return None
    if s[0] in "\"'":
        return _unquote(s, lineno)
    if s == "[]":
        return []
    if s == "{}":
        return {}
    if s[0] in "&*!>[{%@`|?" or s.startswith("- "):
        raise YamlError(f"line {lineno}: unsupported YAML construct: {s}")
    if s in ("true", "false"):
        return s == "true"
    if s in ("null", "~"):
        return None
    if _INT.match(s):
        return int(s)
    return s


class _Line:
    def __init__(self, lineno, raw):
        self.lineno = lineno
        self.raw = raw
        body = raw.lstrip(" ")
        if body.startswith("\t"):
            raise YamlError(f"line {lineno}: tab in indentation")
        self.indent = len(raw) - len(body)
        text = _strip_comment(body)
        if text is None:
            raise YamlError(f"line {lineno}: unterminated quote")
        self.text = text


class _Parser:
    def __init__(self, lines):
        self.lines = lines  # raw lines of one document, numbered
        self.i = 0
        self._skip()

    def _skip(self):
        while self.i < len(self.lines) and self._line(self.i).text == "":
            self.i += 1

    def _line(self, i):
        return self.lines[i] if isinstance(self.lines[i], _Line) else self._make(i)

    def _make(self, i):
        n, raw = self.lines[i]
        self.lines[i] = _Line(n, raw)
        return self.lines[i]

    def cur(self):
        return self._line(self.i) if self.i < len(self.lines) else None

    def node(self, indent):
        line = self.cur()
        if line is None or line.indent < indent:
            return None
        if line.text == "-" or line.text.startswith("- "):
            return self.seq(line.indent)
        return self.map(line.indent)

    def _value(self, rest, line, indent):
        """The value after `key:` or `- `."""
        self.i += 1
        if rest in ("|", "|-"):
            return self.block_scalar(indent, rest == "|-")
        if rest != "":
            self._skip()
            return _scalar(rest, line.lineno)
        self._skip()
        nxt = self.cur()
        if nxt is None:
            return None
        if nxt.indent > indent:
            return self.node(nxt.indent)
        if nxt.indent == indent and (nxt.text == "-" or nxt.text.startswith("- ")):
            return self.seq(indent)  # "key:" then "- item" at the key's indent
        return None

    def map(self, indent):
        out = {}
        while True:
            line = self.cur()
            if line is None or line.indent < indent:
                return out
            if line.indent > indent:
                raise YamlError(f"line {line.lineno}: unexpected indentation")
            if line.text == "-" or line.text.startswith("- "):
                return out  # a sequence at this indent belongs to the parent key
            m = _KEY.match(line.text)
            if not m:
                raise YamlError(f"line {line.lineno}: expected `key: value`, got: {line.text}")
            key = m.group(1)
            key = _unquote(key, line.lineno) if key[0] in "\"'" else key
            if key in out:
                raise YamlError(f"line {line.lineno}: duplicate key {key}")
            out[key] = self._value(m.group(2).strip(), line, indent)

    def seq(self, indent):
        out = []
        while True:
            line = self.cur()
            if line is None or line.indent < indent:
                return out
            if line.indent > indent or not (line.text == "-" or line.text.startswith("- ")):
                if line.indent == indent:
                    return out
                raise YamlError(f"line {line.lineno}: unexpected indentation")
            rest = line.text[1:].lstrip(" ")
            if rest and _KEY.match(rest) and rest[0] not in "\"'[{":
                # "- key: value": a mapping whose keys sit where `key` starts.
                line.indent += len(line.text) - len(rest)
                line.text = rest
                out.append(self.map(line.indent))
            else:
                out.append(self._value(rest, line, indent))

    def block_scalar(self, indent, strip):
        parts, block_indent = [], None
        while self.i < len(self.lines):
            n, raw = self.lines[self.i] if not isinstance(self.lines[self.i], _Line) else (
                self.lines[self.i].lineno, self.lines[self.i].raw)
            if raw.strip() == "":
                parts.append("")
                self.i += 1
                continue
            ind = len(raw) - len(raw.lstrip(" "))
            if ind <= indent:
                break
            if block_indent is None:
                block_indent = ind
            if ind < block_indent:
                raise YamlError(f"line {n}: block scalar line less indented than its first line")
            parts.append(raw[block_indent:])
            self.i += 1
        while parts and parts[-1] == "":
            parts.pop()
        self._skip()
        text = "\n".join(parts)
        return text if strip else text + "\n"


def load_all(text, name="<yaml>"):
    """Every document of `text`, as Python values."""
    docs, cur = [], []
    for n, raw in enumerate(text.split("\n"), 1):
        if raw.startswith("---"):
            if raw[3:].strip() and not raw[3:].strip().startswith("#"):
                raise YamlError(f"{name}: line {n}: content after ---")
            docs.append(cur)
            cur = []
        elif raw.startswith("%") or raw.startswith("..."):
            raise YamlError(f"{name}: line {n}: directives and document ends are not read")
        else:
            cur.append((n, raw.rstrip("\r")))
    docs.append(cur)
    out = []
    for lines in docs:
        try:
            p = _Parser(lines)
            if p.cur() is None:
                continue
            first = p.cur()
            if first.indent != 0:
                raise YamlError(f"line {first.lineno}: a document must start at column 0")
            value = p.node(0)
            if p.cur() is not None:
                raise YamlError(f"line {p.cur().lineno}: unexpected content")
        except YamlError as e:
            raise YamlError(f"{name}: {e}") from None
        out.append(value)
    return out
