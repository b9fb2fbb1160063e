#!/usr/bin/python3
"""A small Kubernetes API for e2e/grants.sh: what the node agent asks of the
real one, served over TLS (a certificate of the test's own CA) inside the
test world's node namespace.

    fakekube.py --listen 127.0.0.1:PORT --cert C --key K --token-file F --state S

Served (Authorization: Bearer <the token file's current content>, else 401):
  GET   /api/v1/pods?fieldSelector=spec.nodeName=N            a PodList
  GET   /api/v1/pods?watch=1&resourceVersion=RV&...            a watch stream:
        every change after RV, then new ones as they come, a BOOKMARK every
        2 s; RV older than this process's first version: ERROR 410
  PATCH /api/v1/namespaces/NS/pods/NAME/status                 conditions merged by type
  POST  /api/v1/namespaces/NS/events                           recorded
The test drives it (no token, loopback only) with
  POST  /_test/pod     {"namespace","name","annotations":{..}|<anything>,"gate":bool}
  GET   /_test/state   {"pods":{...},"events":[...],"patches":[...],"requests":N,"unauthorized":N}
The state (pods, events, patches) survives a restart through --state; the
resource versions of a restarted server start past the old ones, and its
history does not: a watch from before the restart gets 410 Gone.
"""
import argparse
import json
import os
import ssl
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COND = "netguard.boxxkite.io/enforced"


class World:
    def __init__(self, path, node):
        self.path, self.node = path, node
        self.cv = threading.Condition()
        self.history = []  # (rv, type, pod)
        self.st = {"pods": {}, "events": [], "patches": [], "rv": 100, "requests": 0, "unauthorized": 0,
                   "watches": 0, "lists": 0}
        if os.path.exists(path):
            with open(path) as f:
                self.st = json.load(f)
            self.st["rv"] += 1000  # past anything handed out before
        self.first_rv = self.st["rv"]
        self.save()

    def save(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.st, f)
        os.replace(tmp, self.path)

    def bump(self, kind, pod):
        self.st["rv"] += 1
        pod["metadata"]["resourceVersion"] = str(self.st["rv"])
        self.history.append((self.st["rv"], kind, json.loads(json.dumps(pod))))
        self.save()
        self.cv.notify_all()

    def put_pod(self, spec):
        key = spec["namespace"] + "/" + spec["name"]
        with self.cv:
            old = self.st["pods"].get(key)
            pod = old or {"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"namespace": spec["namespace"], "name": spec["name"],
                                       "uid": "uid-" + spec["name"]},
                          "spec": {"nodeName": spec.get("node", self.node), "containers": [{"name": "c"}]},
                          "status": {"phase": "Running", "conditions": []}}
            if "annotations" in spec:
                pod["metadata"]["annotations"] = spec["annotations"]
            if spec.get("gate"):
                pod["spec"]["readinessGates"] = [{"conditionType": COND}]
            if spec.get("delete"):
                self.st["pods"].pop(key, None)
                self.bump("DELETED", pod)
                return
            self.st["pods"][key] = pod
            self.bump("MODIFIED" if old else "ADDED", pod)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    world = None
    token_file = None

    def log_message(self, fmt, *args):
        pass

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def authorized(self):
        with open(self.token_file) as f:
            want = "Bearer " + f.read().strip()
        w = self.world
        with w.cv:
            w.st["requests"] += 1
            if self.headers.get("Authorization") != want:
                w.st["unauthorized"] += 1
                return False
        return True

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(n) or b"null")

    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        q = dict(urllib.parse.parse_qsl(u.query))
        w = self.world
        if u.path == "/_test/state":
            with w.cv:
                return self.reply(200, w.st)
        if not self.authorized():
            return self.reply(401, {"kind": "Status", "code": 401, "message": "Unauthorized"})
        if u.path != "/api/v1/pods" or q.get("fieldSelector") != "spec.nodeName=" + w.node:
            return self.reply(404, {"kind": "Status", "code": 404, "message": "not served here"})
        if q.get("watch") not in ("1", "true"):
            with w.cv:
                w.st["lists"] += 1
                items = [p for p in w.st["pods"].values() if p["spec"]["nodeName"] == w.node]
                return self.reply(200, {"kind": "PodList", "apiVersion": "v1",
                                        "metadata": {"resourceVersion": str(w.st["rv"])}, "items": items})
        self.watch(int(q.get("resourceVersion") or 0), int(q.get("timeoutSeconds") or 60))

    def watch(self, rv, timeout):
        w = self.world
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        with w.cv:
            w.st["watches"] += 1
        if rv < w.first_rv:
            self.line({"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired",
                                                   "message": "too old resource version: %d" % rv}})
            return
        end = time.time() + timeout
        next_bookmark = time.time() + 2
        while time.time() < end:
            with w.cv:
                new = [h for h in w.history if h[0] > rv]
                if not new:
                    w.cv.wait(0.2)
                    new = [h for h in w.history if h[0] > rv]
                cur = w.st["rv"]
            for h in new:
                rv = h[0]
                if h[2]["spec"]["nodeName"] == w.node:
                    if not self.line({"type": h[1], "object": h[2]}):
                        return
            if time.time() >= next_bookmark:
                next_bookmark = time.time() + 2
                if not self.line({"type": "BOOKMARK", "object": {"kind": "Pod", "apiVersion": "v1",
                                                                 "metadata": {"resourceVersion": str(cur)}}}):
                    return
                rv = max(rv, cur)

    def line(self, obj):
        try:
            self.wfile.write(json.dumps(obj).encode() + b"\n")
            self.wfile.flush()
            return True
        except OSError:
            return False

    def do_POST(self):
        u = urllib.parse.urlparse(self.path)
        w = self.world
        if u.path == "/_test/pod":
            w.put_pod(self.body())
            return self.reply(200, {})
        if not self.authorized():
            return self.reply(401, {"kind": "Status", "code": 401, "message": "Unauthorized"})
        parts = u.path.split("/")
        if len(parts) == 6 and parts[1:4] == ["api", "v1", "namespaces"] and parts[5] == "events":
            ev = self.body()
            if self.headers.get("Content-Type") != "application/json" or ev.get("kind") != "Event":
                return self.reply(400, {"kind": "Status", "code": 400, "message": "not an Event"})
            with w.cv:
                w.st["events"].append(ev)
                w.save()
            return self.reply(201, ev)
        self.reply(404, {"kind": "Status", "code": 404})

    def do_PATCH(self):
        u = urllib.parse.urlparse(self.path)
        w = self.world
        if not self.authorized():
            return self.reply(401, {"kind": "Status", "code": 401, "message": "Unauthorized"})
        parts = u.path.split("/")
        if not (len(parts) == 8 and parts[1:4] == ["api", "v1", "namespaces"] and parts[5] == "pods"
                and parts[7] == "status"):
            return self.reply(404, {"kind": "Status", "code": 404})
        if self.headers.get("Content-Type") != "application/strategic-merge-patch+json":
            return self.reply(415, {"kind": "Status", "code": 415})
        patch = self.body()
        key = parts[4] + "/" + parts[6]
        with w.cv:
            pod = w.st["pods"].get(key)
            if not pod:
                return self.reply(404, {"kind": "Status", "code": 404})
            conds = pod["status"].setdefault("conditions", [])
            for c in patch["status"]["conditions"]:
                conds[:] = [x for x in conds if x["type"] != c["type"]] + [c]
                w.st["patches"].append({"pod": key, "status": c["status"], "reason": c["reason"],
                                        "message": c.get("message", ""), "at": time.time()})
            w.save()
            return self.reply(200, pod)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--token-file", required=True)
    ap.add_argument("--state", required=True)
    ap.add_argument("--node", default="node-1")
    a = ap.parse_args()
    host, port = a.listen.rsplit(":", 1)
    Handler.world = World(a.state, a.node)
    Handler.token_file = a.token_file
    srv = ThreadingHTTPServer((host, int(port)), Handler)
    srv.daemon_threads = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
