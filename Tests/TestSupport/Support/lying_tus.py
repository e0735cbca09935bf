#!/usr/bin/env python3
"""A hostile tus server for the upload tests: it speaks enough tus 1.0 to be uploaded to, and lies.
Listens on 127.0.0.1 only; it stores nothing but counts what it is sent.

  lying_tus.py PORT MODE [--stats FILE]

MODE
  full        after the first chunk, claims Upload-Offset = Upload-Length (a false success)
  same        answers 204 to every PATCH without advancing the offset
  zero        answers every PATCH with offset 0
  one-short   keeps one byte fewer than it was sent
  foreign     creates the upload at http://localhost:PORT/… (another origin than 127.0.0.1)
  redirect    answers the creation with 307 to http://localhost:PORT/files/
  hang        accepts connections and never answers (for 120 s at most)

--stats FILE  {"requests": n, "by_method": {...}, "data_bytes": n, "credentials_to": {host: n}} after every
              request; credentials_to counts requests that carried an Authorization header, by Host.
"""
import argparse
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import stats_file  # beside this script

args = None
lock = threading.Lock()
stats = {"requests": 0, "by_method": {}, "data_bytes": 0, "credentials_to": {}}
uploads = {}  # id -> {"length": n, "offset": n}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def handle_one(self):
        if args.mode == "hang":
            time.sleep(120)
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        host = (self.headers.get("Host") or "").split(":")[0]
        with lock:
            stats["requests"] += 1
            stats["by_method"][self.command] = stats["by_method"].get(self.command, 0) + 1
            stats["data_bytes"] += len(body)
            if self.headers.get("Authorization"):
                stats["credentials_to"][host] = stats["credentials_to"].get(host, 0) + 1
        self.save_stats()
        if self.command == "OPTIONS":
            return self.answer(204, {"Tus-Version": "1.0.0", "Tus-Extension": "creation,termination"})
        if self.command == "POST":
            if args.mode == "redirect" and host != "localhost":
                return self.answer(307, {"Location": f"http://localhost:{args.port}/files/"})
            upload_id = f"u{len(uploads) + 1}"
            uploads[upload_id] = {"length": int(self.headers.get("Upload-Length") or 0), "offset": 0}
            base = f"http://localhost:{args.port}" if args.mode == "foreign" else f"http://127.0.0.1:{args.port}"
            return self.answer(201, {"Location": f"{base}/files/{upload_id}"})
        upload = uploads.get(self.path.rsplit("/", 1)[-1])
        if upload is None:
            return self.answer(404, {})
        if self.command == "HEAD":
            return self.answer(200, {"Upload-Offset": str(upload["offset"]), "Upload-Length": str(upload["length"])})
        if self.command == "DELETE":
            return self.answer(204, {})
        if self.command == "PATCH":
            sent_from = int(self.headers.get("Upload-Offset") or 0)
            if args.mode == "full":
                upload["offset"] = upload["length"]
            elif args.mode == "same":
                upload["offset"] = sent_from
            elif args.mode == "zero":
                upload["offset"] = 0
            elif args.mode == "one-short":
                upload["offset"] = max(sent_from, sent_from + len(body) - 1)
            else:
                upload["offset"] = sent_from + len(body)
            return self.answer(204, {"Upload-Offset": str(upload["offset"])})
        return self.answer(405, {})

    def answer(self, status, headers):
        self.send_response(status)
        self.send_header("Tus-Resumable", "1.0.0")
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def save_stats(self):
        stats_file.save(args.stats, stats, lock)

    do_GET = do_POST = do_PATCH = do_PUT = do_HEAD = do_DELETE = do_OPTIONS = handle_one


def main():
    global args
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("mode", choices=["full", "same", "zero", "one-short", "foreign", "redirect", "hang"])
    parser.add_argument("--stats")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
