#!/usr/bin/env python3
"""The plain receiver of Benchmarks/ingest.sh's machine limit: what loopback uploads can reach on this
machine when the receiving side does nothing but put each body on disk durably.

A Python ThreadingHTTPServer (standard library; one thread per connection, HTTP/1.1 keep-alive, a
listen backlog of 1024 so that 100 connections at once are not dropped into SYN retries). Each PUT or
POST body (Content-Length) is streamed to its own new file in FOLDER, 1 MiB at a time (readinto into
one buffer, os.write — the socket and file calls release the GIL, so threads overlap), then fsync'd
and closed; only then is the answer (201) sent. Nothing else: no parsing, no hashing, no database.

  ingest_receiver.py FOLDER [--port 0]

Prints "listening on PORT" once it accepts connections; stops on SIGTERM or SIGINT.
"""
import argparse
import itertools
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHUNK = 1 << 20


class Server(ThreadingHTTPServer):
    request_queue_size = 1024
    daemon_threads = True
    allow_reuse_address = True


def handler(folder):
    numbers = itertools.count()
    lock = threading.Lock()

    class Receive(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet: one line per request would cost more than the write
            pass

        def do_PUT(self):
            length = int(self.headers.get("Content-Length", "0"))
            with lock:
                number = next(numbers)
            path = os.path.join(folder, f"{number}.bin")
            buffer = bytearray(CHUNK)
            view = memoryview(buffer)
            left = length
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                while left:
                    got = self.rfile.readinto(view[:min(CHUNK, left)])
                    if not got:
                        raise ConnectionError(f"the client stopped after {length - left} of {length} bytes")
                    written = 0
                    while written < got:
                        written += os.write(descriptor, view[written:got])
                    left -= got
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
            self.send_response(201)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_POST = do_PUT

    return Receive


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    os.makedirs(args.folder, exist_ok=True)
    server = Server(("127.0.0.1", args.port), handler(args.folder))
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"listening on {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
