"""logschema.py COMPONENT FILE: every line of FILE is one JSON object of
the one log schema (README "Logs") that the plugin's decision log, the
agent and the installer share: it starts ts, level, msg, plugin,
component, event; ts is UTC with milliseconds; level info, warn or error;
plugin "boxxkite-netguard"; component COMPONENT; event a word; a pod, when
named, as pod_namespace + pod_name (never "pod", never "time"). Prints how
many lines it read; exit 1 naming the first line that is not so."""
import json
import re
import sys

HEAD = ["ts", "level", "msg", "plugin", "component", "event"]


def check(component, path):
    n = 0
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        o = json.loads(line)
        where = "%s line %d: %s" % (path, n, line.strip()[:300])
        assert list(o)[:6] == HEAD, "head %s: %s" % (list(o)[:6], where)
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["ts"]), where
        assert o["level"] in ("info", "warn", "error"), where
        assert o["plugin"] == "boxxkite-netguard" and o["component"] == component, where
        assert isinstance(o["msg"], str) and o["msg"], where
        assert isinstance(o["event"], str) and re.fullmatch(r"[a-z][a-z_]*", o["event"]), where
        assert "pod" not in o and "time" not in o, where
        assert ("pod_namespace" in o) == ("pod_name" in o), where
        for k in ("pod_namespace", "pod_name"):
            assert k not in o or isinstance(o[k], str), where
    return n


if __name__ == "__main__":
    try:
        print("%d lines" % check(sys.argv[1], sys.argv[2]))
    except (AssertionError, ValueError, KeyError) as e:
        print(e)
        sys.exit(1)
