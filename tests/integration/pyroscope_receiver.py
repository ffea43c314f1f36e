#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A test receiver for bpfprof --push. It follows Pyroscope's published server
API (github.com/grafana/pyroscope docs/sources/reference-server-api/index.md
and api/push/v1/push.proto) for the two ingestion endpoints; it is NOT
Pyroscope and stores nothing but what the test reads back:

  POST /push.v1.PusherService/Push   Connect unary, Content-Type application/proto,
                                     body push.v1.PushRequest
  POST /ingest?name=SERVICE{k=v,...}&from=S&until=S&format=pprof   body: gzip pprof

Every request is checked (method, path, headers, labels, the protobuf, the
pprof inside); a problem answers 400 and is written to OUT/errors.log, which
the test requires to be empty. Accepted profiles are saved as OUT/NNNN.pb.gz
with one JSON line each in OUT/index.jsonl (labels, ID, time, samples).

Faults come from MODE_FILE, read on every request: "ok", "500" (answer 500
after reading the body), "slow SECONDS" (answer 200 after that long), "401".
"Down" is the test stopping this process.

The protobuf wire format is decoded by hand (receiver_lib.py): no dependency
beyond Python 3.

Also: --decode-push FILE (a spooled STAMP-push.pb) and --decode-pprof FILE
print the same JSON summaries, for the test.
"""
import argparse
import base64
import gzip
import json
import os
import re
import socket
import sys
import threading
import time
import urllib.parse

# push.sh loads this file by path (importlib): its folder is not on sys.path then
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from receiver_lib import Handler as BaseHandler, Server, add_server_args, fields, packed_ints, read_mode, serve  # noqa: E402,F401

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
LABEL_NAME_RE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def pprof_summary(raw):
    """gzip pprof -> samples (sum of value[0]), time, duration, sample types, functions."""
    if raw[:2] != b"\x1f\x8b":
        raise ValueError("not gzip")
    b = gzip.decompress(raw)
    strings, samples, types, tn, dn, funcs = [], 0, [], 0, 0, 0
    for num, wt, v in fields(b):
        if num == 6:
            strings.append(v.decode())
        elif num == 2:
            vals = []
            for n2, w2, v2 in fields(v):
                if n2 == 2:
                    vals += packed_ints(w2, v2)
            samples += vals[0] if vals else 0
        elif num == 1:
            t = dict((n2, v2) for n2, _, v2 in fields(v))
            types.append((t.get(1, 0), t.get(2, 0)))
        elif num == 9:
            tn = v
        elif num == 10:
            dn = v
        elif num == 5:
            funcs += 1
    return {"samples": samples, "time_nanos": tn, "duration_nanos": dn, "functions": funcs,
            "sample_types": ["%s/%s" % (strings[a], strings[u]) for a, u in types]}


def decode_push(b):
    """push.v1.PushRequest -> [{labels: [[name, value]], samples: [{id, raw}]}]"""
    series = []
    for num, wt, v in fields(b):
        if num != 1 or wt != 2:
            raise ValueError("PushRequest: unexpected field %d" % num)
        s = {"labels": [], "samples": []}
        for n2, w2, v2 in fields(v):
            if n2 == 1:
                lp = dict((n3, v3.decode()) for n3, _, v3 in fields(v2))
                s["labels"].append([lp.get(1, ""), lp.get(2, "")])
            elif n2 == 2:
                rs = dict((n3, v3) for n3, _, v3 in fields(v2))
                s["samples"].append({"id": rs.get(2, b"").decode(), "raw": rs.get(1, b"")})
            elif n2 != 3:
                raise ValueError("RawProfileSeries: unexpected field %d" % n2)
        series.append(s)
    return series


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.seq = 0
        os.makedirs(args.out, exist_ok=True)
        self.seq = len([f for f in os.listdir(args.out) if f.endswith(".pb.gz")])

    def mode(self):
        return read_mode(self.args.mode_file)

    def error(self, msg):
        with self.lock, open(os.path.join(self.args.out, "errors.log"), "a") as f:
            f.write(msg + "\n")

    def save(self, api, path, labels, sid, raw, summary):
        with self.lock:
            self.seq += 1
            name = "%04d-%d.pb.gz" % (self.seq, os.getpid())
            with open(os.path.join(self.args.out, name), "wb") as f:
                f.write(raw)
            rec = {"file": name, "api": api, "path": path, "labels": labels, "id": sid,
                   "bytes": len(raw), "received": time.time()}
            rec.update(summary)
            with open(os.path.join(self.args.out, "index.jsonl"), "a") as f:
                f.write(json.dumps(rec) + "\n")


def check_labels(st, labels, where):
    bad = []
    names = [n for n, _ in labels]
    if names != sorted(names) or len(set(names)) != len(names):
        bad.append("labels not sorted or not unique: %s" % names)
    d = dict(labels)
    for n in names:
        if n != "__name__" and not LABEL_NAME_RE.match(n):
            bad.append("bad label name %r" % n)
    if not d.get("service_name"):
        bad.append("no service_name")
    if d.get("hostname") != socket.gethostname():
        bad.append("hostname %r, expected %r" % (d.get("hostname"), socket.gethostname()))
    for kv in st.args.expect_label:
        k, v = kv.split("=", 1)
        if d.get(k) != v:
            bad.append("label %s=%r, expected %r" % (k, d.get(k), v))
    return ["%s: %s" % (where, b) for b in bad]


class Handler(BaseHandler):
    CONTENT_TYPE = "application/proto"

    def reject(self, msg):
        self.server.st.error("%s %s: %s" % (self.command, self.path, msg))
        self.answer(400, json.dumps({"code": "invalid_argument", "message": msg}).encode(),
                    "application/json")

    def do_GET(self):
        self.reject("GET: only POST is an ingestion method")

    def do_PUT(self):
        self.reject("PUT: only POST is an ingestion method")

    def do_POST(self):
        st = self.server.st
        n = int(self.headers.get("Content-Length", "-1"))
        if n < 0:
            return self.reject("no Content-Length")
        body = self.rfile.read(n)
        mode = st.mode()
        if mode[0] == "500":
            return self.answer(500, b'{"code":"internal","message":"test fault"}', "application/json")
        if mode[0] == "401":
            return self.answer(401, b'{"code":"unauthenticated","message":"test fault"}', "application/json")
        if mode[0] == "slow":
            time.sleep(float(mode[1]))
        bad = []
        for h in st.args.expect_header:
            k, v = h.split(":", 1)
            if self.headers.get(k) != v.strip():
                bad.append("header %s: %r, expected %r" % (k, self.headers.get(k), v.strip()))
        if not (self.headers.get("User-Agent") or "").startswith("bpfprof/"):
            bad.append("User-Agent %r" % self.headers.get("User-Agent"))
        url = urllib.parse.urlsplit(self.path)
        try:
            if url.path == "/push.v1.PusherService/Push":
                if self.headers.get("Content-Type") != "application/proto":
                    bad.append("Content-Type %r" % self.headers.get("Content-Type"))
                if self.headers.get("Connect-Protocol-Version") != "1":
                    bad.append("Connect-Protocol-Version %r" % self.headers.get("Connect-Protocol-Version"))
                if url.query:
                    bad.append("a query string on the Connect endpoint")
                series = decode_push(body)
                if not series:
                    bad.append("PushRequest without series")
                seen = set()
                for i, s in enumerate(series):
                    key = tuple(map(tuple, s["labels"]))
                    if key in seen:
                        bad.append("series %d: the same labels as another series" % i)
                    seen.add(key)
                    bad += check_labels(st, s["labels"], "series %d" % i)
                    if dict(s["labels"]).get("__name__") != "process_cpu":
                        bad.append("series %d: __name__ %r" % (i, dict(s["labels"]).get("__name__")))
                    if len(s["samples"]) != 1:
                        bad.append("series %d: %d samples" % (i, len(s["samples"])))
                    for smp in s["samples"]:
                        if not UUID_RE.match(smp["id"]):
                            bad.append("series %d: ID %r is not a UUID" % (i, smp["id"]))
                        summ = pprof_summary(smp["raw"])
                        # bpfprof's CPU pair first (--off-cpu adds its own after them)
                        if summ["sample_types"][:2] != ["samples/count", "cpu/nanoseconds"]:
                            bad.append("sample types %s" % summ["sample_types"])
                if bad:
                    return self.reject("; ".join(bad))
                for s in series:
                    for smp in s["samples"]:
                        st.save("connect", url.path, s["labels"], smp["id"], smp["raw"],
                                pprof_summary(smp["raw"]))
                return self.answer(200, b"")
            if url.path == "/ingest":
                q = dict(urllib.parse.parse_qsl(url.query, strict_parsing=True))
                for k in ("name", "from", "until", "format", "sampleRate", "spyName"):
                    if k not in q:
                        bad.append("no %s parameter" % k)
                if q.get("format") != "pprof":
                    bad.append("format %r" % q.get("format"))
                m = re.match(r"^([A-Za-z0-9_./-]+)\{([^{}]*)\}$", q.get("name", ""))
                if not m:
                    bad.append("name %r is not SERVICE{k=v,...}" % q.get("name"))
                    labels = []
                else:
                    labels = [["service_name", m.group(1)]]
                    for kv in filter(None, m.group(2).split(",")):
                        k, _, v = kv.partition("=")
                        labels.append([k, v])
                    labels.sort()
                    bad += check_labels(st, labels, "name")
                if not bad and not int(q["from"]) <= int(q["until"]) <= time.time() + 5:
                    bad.append("from %s until %s" % (q["from"], q["until"]))
                summ = pprof_summary(body)
                if bad:
                    return self.reject("; ".join(bad))
                st.save("ingest", url.path, labels, "", body, summ)
                return self.answer(200, b"", "text/plain")
            return self.reject("no such endpoint %r" % url.path)
        except (ValueError, OSError, EOFError, UnicodeDecodeError) as e:
            return self.reject("undecodable: %s" % e)


def main():
    ap = argparse.ArgumentParser()
    add_server_args(ap)
    ap.add_argument("--expect-header", action="append", default=[])
    ap.add_argument("--expect-label", action="append", default=[])
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("--decode-push")
    ap.add_argument("--decode-pprof")
    args = ap.parse_args()
    if args.decode_push:
        with open(args.decode_push, "rb") as f:
            for s in decode_push(f.read()):
                for smp in s["samples"]:
                    rec = {"labels": s["labels"], "id": smp["id"]}
                    rec.update(pprof_summary(smp["raw"]))
                    print(json.dumps(rec))
        return
    if args.decode_pprof:
        with open(args.decode_pprof, "rb") as f:
            print(json.dumps(pprof_summary(f.read())))
        return
    srv = Server(("127.0.0.1", args.port), Handler)
    srv.st = State(args)
    if args.tls_cert:
        import ssl
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    serve(srv, args.port_file)


if __name__ == "__main__":
    sys.exit(main())
