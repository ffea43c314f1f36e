# SPDX-License-Identifier: MIT
"""What the test receivers of bpfprof --push share (pyroscope_receiver.py for
the Pyroscope API, otlp_receiver.py for OTLP/HTTP): the protobuf wire format
decoded by hand (protobuf.dev/programming-guides/encoding; no dependency
beyond Python 3), the fault mode read from MODE_FILE on every request, the
HTTP/1.1 answer, the threaded server and its port file. Not a test itself.
"""
import http.server
import os
import socketserver


def varint(b, i):
    v = shift = 0
    while True:
        if i >= len(b):
            raise ValueError("truncated varint")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i
        if shift > 63:
            raise ValueError("varint too long")


def fields(b):
    """(field number, wire type, value): int for varints and fixed, bytes for LEN."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise ValueError("field number 0")
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif wt == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise ValueError("LEN past the end")
            v, i = b[i:i + n], i + n
        elif wt == 5:
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v


def packed_ints(wt, v):
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def read_mode(mode_file):
    """The fault mode's words ("ok", "500", ...): MODE_FILE's, ["ok"] without one."""
    try:
        with open(mode_file) as f:
            return f.read().split() or ["ok"]
    except OSError:
        return ["ok"]


class Handler(http.server.BaseHTTPRequestHandler):
    """Silent (the test reads OUT/errors.log), keep-alive; answers in CONTENT_TYPE by default."""
    protocol_version = "HTTP/1.1"
    CONTENT_TYPE = "application/x-protobuf"

    def log_message(self, fmt, *a):
        pass

    def answer(self, code, body=b"", ctype=None):
        self.send_response(code)
        self.send_header("Content-Type", ctype or self.CONTENT_TYPE)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def add_server_args(ap):
    """The options every receiver takes: where it listens, saves, and reads its mode."""
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--out")
    ap.add_argument("--mode-file", default="/nonexistent")


def serve(srv, port_file):
    """Write the bound port to port_file (renamed into place: the test polls it), then serve."""
    if port_file:
        with open(port_file + ".tmp", "w") as f:
            f.write(str(srv.server_address[1]))
        os.rename(port_file + ".tmp", port_file)
    srv.serve_forever()
