#!/usr/bin/env python3
"""A small HTTP reverse proxy for the upload tests: forwards to a tus server on 127.0.0.1 and injects
faults. Listens on 127.0.0.1 only; every fault is bounded by a count.

  fault_proxy.py LISTEN_PORT UPSTREAM_PORT [--fail-503 N] [--drop N] [--corrupt-data N]
                 [--require-token T] [--delay-data SECONDS] [--stats FILE]

Faults apply to the requests that carry upload data: every PATCH and PUT with a body (tus chunks,
S3 objects and parts), and a POST with a body (tus creation-with-upload, S3 CompleteMultipartUpload).

--fail-503 N       answer 503 to the first N data requests
--fail-507 N       answer 507 with MinIO's "storage full" error to the first N data requests (a bucket with no room)
--slow-down N      answer 503 with S3's "SlowDown" error to the first N data requests (a bucket throttling requests)
--drop N           close the connection without an answer on the first N data requests
                   (after forwarding half of the body, like a connection cut mid-chunk)
--corrupt-data N   flip one byte in the body of the first N data requests
--fail-delete N    answer 503 to the first N DELETE requests
--cut N            on the first N data requests, send the server the request's head (its Content-Length
                   unchanged) and half of its body, then close both connections: an upload interrupted
                   half-way, as the server sees it
--require-token T  answer 401 unless 'Authorization: Bearer T'
--delay-data S     sleep S seconds before forwarding each data request (slows an upload down)
--throttle B       send every body to the server at B bytes a second, a tenth of a second's worth at a time
                   (a slow mobile link, as the server sees it)
--pause-after-bytes N --resume-file F
                   once the server accepted N data bytes, hold every further data request until
                   the file F exists (a test does something to the server meanwhile, then creates F)
--hold-path S --resume-file F
                   hold every data request whose path contains S until the file F exists; "held" in
                   the stats counts them as they arrive (e.g. in front of S3: a photo's upload to its
                   key, while the test does something to the server that sent it)
--stats FILE       write {"data_bytes": body bytes of data requests the server accepted,
                   "data_requests": ..., "requests": ..., "by_method": {...},
                   "data_log": [{"method", "offset" (Upload-Offset), "length", "status"}, ...]} after every request
"""
import argparse
import http.client
import os
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import stats_file  # beside this script

SLOW_DOWN = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
             b'<Message>Please reduce your request rate.</Message></Error>')
STORAGE_FULL = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>XMinioStorageFull</Code>'
                b'<Message>Storage backend has reached its minimum free drive threshold. Please delete a few objects'
                b' to proceed.</Message></Error>')

args = None
lock = threading.Lock()
stats = {"data_requests": 0, "data_bytes": 0, "requests": 0, "by_method": {}, "data_log": [], "held": 0}


class SkipInformational(http.client.HTTPResponse):
    """A response that passes over interim 1xx answers (http.client skips only 100), e.g. the 104 an
    IETF-draft server sends before its final answer."""

    def _read_status(self):
        while True:
            version, status, reason = super()._read_status()
            if not 100 <= status < 200 or status == 101:
                return version, status, reason
            http.client._read_headers(self.fp)


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def forward(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        carries_data = self.command == "PATCH" or (self.command in ("POST", "PUT") and length > 0)
        with lock:
            stats["requests"] += 1
            stats["by_method"][self.command] = stats["by_method"].get(self.command, 0) + 1
            data_index = stats["data_requests"] if carries_data else None
            if carries_data:
                stats["data_requests"] += 1
        if args.require_token and self.headers.get("Authorization") != f"Bearer {args.require_token}":
            return self.answer(401, b"missing or wrong bearer token")
        if self.command == "DELETE":
            with lock:
                deletes = stats["by_method"]["DELETE"]
            if deletes <= args.fail_delete:
                return self.answer(503, b"injected 503 on DELETE")
        if data_index is not None:
            if args.delay_data:
                time.sleep(args.delay_data)
            if args.hold_path and args.hold_path in self.path:
                with lock:
                    stats["held"] += 1
                self.save_stats()
                while not os.path.exists(args.resume_file):
                    time.sleep(0.01)
            if args.pause_after_bytes is not None:
                while stats["data_bytes"] >= args.pause_after_bytes and not os.path.exists(args.resume_file):
                    time.sleep(0.01)
            if data_index < args.fail_503:
                return self.answer(503, b"injected 503")
            if data_index < args.fail_507:
                return self.answer(507, STORAGE_FULL)
            if data_index < args.slow_down:
                return self.answer(503, SLOW_DOWN)
            if data_index < args.cut:
                self.log_data(len(body), 0)
                return self.cut(body)
            if data_index < args.drop:
                half = body[: len(body) // 2]
                self.send_upstream(half, headers_override={"Content-Length": str(len(half))}, swallow=True)
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if data_index < args.corrupt_data and body:
                body = bytes([body[0] ^ 0xFF]) + body[1:]
        status, headers, payload = self.send_upstream(body)
        if carries_data:
            self.log_data(len(body), status)
        if carries_data and 200 <= status < 300:
            with lock:
                stats["data_bytes"] += len(body)
        self.send_response(status)
        for name, value in headers:
            if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
        self.save_stats()

    def log_data(self, length, status):
        offset = self.headers.get("Upload-Offset")
        with lock:
            stats["data_log"].append(
                {"method": self.command, "offset": int(offset) if offset is not None else None, "length": length, "status": status})

    def cut(self, body):
        """The request's head and half its body to the server, then both connections closed."""
        upstream = socket.create_connection(("127.0.0.1", args.upstream), timeout=30)
        lines = [f"{self.command} {self.path} HTTP/1.1"]
        lines += [f"{k}: {v}" for k, v in self.headers.items() if k.lower() != "connection"]
        upstream.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body[: len(body) // 2])
        time.sleep(0.5)  # the server reads (and keeps) what arrived
        upstream.close()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)
        self.save_stats()

    def send_upstream(self, body, headers_override=None, swallow=False):
        connection = http.client.HTTPConnection("127.0.0.1", args.upstream, timeout=30)
        connection.response_class = SkipInformational
        headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
        headers.update(headers_override or {})
        if args.throttle and body:
            body = throttled(body, args.throttle)
        try:
            connection.request(self.command, self.path, body=body, headers=headers)
            response = connection.getresponse()
            payload = response.read()
            return response.status, response.getheaders(), payload
        except Exception as error:
            if swallow:
                return 0, [], b""
            return 502, [], str(error).encode()
        finally:
            connection.close()

    def answer(self, status, text):
        # Saved before answering: a client that got this answer finds it counted.
        self.save_stats()
        self.send_response(status)
        self.send_header("Tus-Resumable", "1.0.0")
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(text)

    def save_stats(self):
        stats_file.save(args.stats, stats, lock)

    do_GET = do_POST = do_PATCH = do_PUT = do_HEAD = do_DELETE = do_OPTIONS = forward


def throttled(body, per_second):
    """The body in pieces of a tenth of a second's worth, sent at `per_second` bytes a second."""
    piece = max(1, per_second // 10)
    for start in range(0, len(body), piece):
        time.sleep(0.1)
        yield body[start:start + piece]


def main():
    global args
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("upstream", type=int)
    parser.add_argument("--fail-503", type=int, default=0)
    parser.add_argument("--fail-507", type=int, default=0)
    parser.add_argument("--slow-down", type=int, default=0)
    parser.add_argument("--drop", type=int, default=0)
    parser.add_argument("--corrupt-data", type=int, default=0)
    parser.add_argument("--cut", type=int, default=0)
    parser.add_argument("--fail-delete", type=int, default=0)
    parser.add_argument("--require-token")
    parser.add_argument("--delay-data", type=float, default=0)
    parser.add_argument("--throttle", type=int, default=0, help="bytes a second towards the server")
    parser.add_argument("--pause-after-bytes", type=int)
    parser.add_argument("--resume-file")
    parser.add_argument("--hold-path")
    parser.add_argument("--stats")
    args = parser.parse_args()
    ThreadingHTTPServer(("127.0.0.1", args.port), Proxy).serve_forever()


if __name__ == "__main__":
    main()
