#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A test receiver for bpfprof --push-api otlp: OTLP/HTTP profiles as
opentelemetry-proto v1.11.0 docs/specification.md describes them (POST
/v1development/profiles, Content-Type application/x-protobuf, gzip), and NOT
an OpenTelemetry Collector. Every request is checked (method, path, headers,
gzip) and its body decoded twice: by `protoc-c --decode=...
ExportProfilesServiceRequest` with the vendored official .proto files (the
structure), and by hand here (the dictionary and the samples); a problem
answers 400 and goes to OUT/errors.log, which the test requires to be empty.
Accepted requests are saved as OUT/NNNN.otlp (the decompressed body) with one
JSON line each in OUT/index.jsonl: the CPU profile's time, its samples, and
per leaf function the samples of process --pid.

Faults come from MODE_FILE, read on every request: "ok", "500", "partial"
(200 with a partial_success: 1 profile rejected). "Down" is the test stopping
this process. Also: --summary FILE prints the JSON summary of a saved or
spooled (gzip) request.
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from receiver_lib import Handler as BaseHandler, Server, add_server_args, fields, packed_ints, read_mode, serve  # noqa: E402

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROTO_DIR = os.path.join(TOP, "proto", "opentelemetry")
REQUEST = "opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest"
SERVICE = "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"


def sub(b, num):
    return [v for n, _, v in fields(b) if n == num]


def ints(b, num):
    out = []
    for n, wt, v in fields(b):
        if n == num:
            out += packed_ints(wt, v)
    return out


def one(b, num, default=0):
    v = sub(b, num)
    return v[-1] if v else default


def summary(body, pid=0):
    """The request's profiles: [{type, time, samples, leaf: {function: samples of pid}}]"""
    rps = sub(body, 1)
    dicts = sub(body, 2)
    if len(rps) != 1 or len(dicts) != 1:
        raise ValueError("%d resource_profiles, %d dictionaries" % (len(rps), len(dicts)))
    d = dicts[0]
    strings = [s.decode() for s in sub(d, 5)]
    funcs, locs, stacks, attrs = sub(d, 3), sub(d, 2), sub(d, 7), sub(d, 6)
    for name, table in (("string", strings), ("function", funcs), ("location", locs),
                        ("stack", stacks), ("attribute", attrs), ("mapping", sub(d, 1)),
                        ("link", sub(d, 4))):
        if not table or table[0] not in ("", b""):
            raise ValueError("%s_table[0] is not the zero value" % name)

    def attr_pid(idx):
        for i in idx:
            a = attrs[i]
            if strings[one(a, 1)] == "process.pid":
                return one(one(a, 2, b""), 3)
        return None

    def leaf(stack_i):
        li = ints(stacks[stack_i], 1)
        if not li:
            return ""
        lines = sub(locs[li[0]], 3)
        return strings[one(funcs[one(lines[0], 1)], 1)] if lines else "?"

    out = []
    for rp in rps:
        for sp in sub(rp, 2):
            for prof in sub(sp, 2):
                st = one(prof, 1, b"")
                p = {"type": "%s/%s" % (strings[one(st, 1)], strings[one(st, 2)]),
                     "time": one(prof, 3), "period": one(prof, 6), "samples": 0, "leaf": {}}
                for s in sub(prof, 2):
                    v = sum(ints(s, 4))
                    p["samples"] += v
                    if pid and attr_pid(ints(s, 2)) == pid:
                        f = leaf(one(s, 1))
                        p["leaf"][f] = p["leaf"].get(f, 0) + v
                out.append(p)
    return out


def protoc_decode(body):
    r = subprocess.run(["protoc-c", "--proto_path=" + PROTO_DIR, "--decode=" + REQUEST, SERVICE],
                       input=body, capture_output=True)
    if r.returncode:
        raise ValueError("protoc-c --decode: %s" % r.stderr.decode(errors="replace").strip())


class Handler(BaseHandler):

    def reject(self, msg):
        st = self.server.st
        with st.lock, open(os.path.join(st.args.out, "errors.log"), "a") as f:
            f.write("%s %s: %s\n" % (self.command, self.path, msg))
        self.answer(400, msg.encode(), "text/plain")

    def do_POST(self):
        st = self.server.st
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        mode = read_mode(st.args.mode_file)
        if mode[0] == "500":
            return self.answer(500, b"test fault", "text/plain")
        bad = []
        for k, v in (("Content-Type", "application/x-protobuf"), ("Content-Encoding", "gzip")):
            if self.headers.get(k) != v:
                bad.append("header %s: %r" % (k, self.headers.get(k)))
        if not (self.headers.get("User-Agent") or "").startswith("bpfprof/"):
            bad.append("User-Agent %r" % self.headers.get("User-Agent"))
        if self.path != "/v1development/profiles":
            bad.append("path %r" % self.path)
        try:
            raw = gzip.decompress(body)
            protoc_decode(raw)
            summ = summary(raw, st.args.pid)
        except (ValueError, OSError, EOFError, IndexError, UnicodeDecodeError) as e:
            bad.append("undecodable: %s" % e)
        if bad:
            return self.reject("; ".join(bad))
        with st.lock:
            st.seq += 1
            name = "%04d.otlp" % st.seq
            with open(os.path.join(st.args.out, name), "wb") as f:
                f.write(raw)
            with open(os.path.join(st.args.out, "index.jsonl"), "a") as f:
                f.write(json.dumps({"file": name, "received": time.time(), "profiles": summ}) + "\n")
        if mode[0] == "partial":
            # ExportProfilesServiceResponse{partial_success{rejected_profiles: 1, error_message}}
            msg = b"test: 1 profile rejected"
            ps = b"\x08\x01\x12" + bytes([len(msg)]) + msg
            return self.answer(200, b"\x0a" + bytes([len(ps)]) + ps)
        return self.answer(200, b"")


def main():
    ap = argparse.ArgumentParser()
    add_server_args(ap)
    ap.add_argument("--pid", type=int, default=0)
    ap.add_argument("--summary")
    args = ap.parse_args()
    if args.summary:
        with open(args.summary, "rb") as f:
            b = f.read()
        print(json.dumps(summary(gzip.decompress(b) if b[:2] == b"\x1f\x8b" else b, args.pid)))
        return
    os.makedirs(args.out, exist_ok=True)
    srv = Server(("127.0.0.1", args.port), Handler)
    srv.st = argparse.Namespace(args=args, lock=threading.Lock(),
                                seq=len([f for f in os.listdir(args.out) if f.endswith(".otlp")]))
    serve(srv, args.port_file)


if __name__ == "__main__":
    sys.exit(main())
