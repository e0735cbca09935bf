#!/usr/bin/env python3
"""An identity provider's key endpoints for the token tests, on 127.0.0.1: it serves what a folder holds,
read again at every request, so that a test rotates keys by rewriting a file.

  jwks_server.py PORT FOLDER [--stats FILE]

  GET /jwks.json                          FOLDER/jwks.json, with Cache-Control: max-age=FOLDER/max-age (default 3600)
  GET /.well-known/openid-configuration   {"issuer": "http://127.0.0.1:PORT", "jwks_uri": ".../jwks.json"}
  FOLDER/down exists                      every answer is 503 (the provider is down)

--stats FILE  {"jwks_fetches": n, "discovery_fetches": n} after every request.
"""
import argparse
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import stats_file  # beside this script

args = None
lock = threading.Lock()
stats = {"jwks_fetches": 0, "discovery_fetches": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self, status, body, headers=None):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        base = f"http://127.0.0.1:{args.port}"
        with lock:
            if self.path == "/jwks.json":
                stats["jwks_fetches"] += 1
            elif self.path == "/.well-known/openid-configuration":
                stats["discovery_fetches"] += 1
        stats_file.save(args.stats, stats, lock)
        if os.path.exists(os.path.join(args.folder, "down")):
            return self.answer(503, b'{"error": "down"}')
        if self.path == "/jwks.json":
            with open(os.path.join(args.folder, "jwks.json"), "rb") as f:
                body = f.read()
            max_age = "3600"
            if os.path.exists(os.path.join(args.folder, "max-age")):
                with open(os.path.join(args.folder, "max-age")) as f:
                    max_age = f.read().strip()
            return self.answer(200, body, {"Cache-Control": f"public, max-age={max_age}"})
        if self.path == "/.well-known/openid-configuration":
            return self.answer(200, json.dumps({"issuer": base, "jwks_uri": f"{base}/jwks.json"}).encode())
        self.answer(404, b"{}")


def main():
    global args
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("folder")
    parser.add_argument("--stats")
    args = parser.parse_args()
    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
