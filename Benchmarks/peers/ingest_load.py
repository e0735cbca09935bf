#!/usr/bin/env python3
"""The load side of Benchmarks/ingest.sh: N uploads at once to `photoprep serve`, by tus 1.0 or by the
IETF resumable-upload draft, every one its own user with an HS256 token minted from PHOTOPREP_JWT_SECRET
(as Tests/TestSupport/Support/load_uploads.py does), every one on one connection of its own (keep-alive
for all its requests), all released at the same moment by a barrier.

Standard library only (raw sockets, as Tests/TestSupport/Support/draft_upload.py): bodies go out with
socket.sendfile (the kernel copies the file; no Python loop per block), so 100 client threads cost
little CPU next to the server on a 2-core machine.

  ingest_load.py {tus|draft} BASE_URL FILE... [--count 100] [--chunk-size BYTES] [--timeout 600]

- tus: POST /files/ (Upload-Length, Upload-Metadata key), then PATCH from offset 0 — by default the
  whole file in one PATCH (what curl does in Benchmarks/upload.sh); --chunk-size splits it.
- draft (interop version 6): POST /uploads/{key} with the whole body and Upload-Complete: ?1 — one
  request (what URLSession sends for a body of known size); the 104 interim answer is skipped.

Upload i goes to user_photos/bench{i}/bench/{i}.jpg (the photo preset, < 10 MiB) with the file
FILE[i % len(FILE)]. An upload counts once its final request has been answered: the server prepares
and stores the photo before it answers that request. A 503 or 423 on the final request (the pipeline's
queue full, or a finish in progress) is followed as the server says: wait Retry-After (at most 10 s),
then HEAD, which finishes the upload — at most 20 times; each such answer is counted in "statuses".

Prints one JSON object: {"protocol", "count", "ok", "failed": [{"key", "error"}], "bytes" (of the
uploads that finished), "seconds" (barrier release → last final answer), "mb_per_s" (10^6 bytes),
"photos_per_s", "latency_s": {"min", "p50", "p90", "max"}, "statuses": {"POST 201": n, ...},
"client_cpu_s"}.
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import resource
import socket
import threading
import time
from urllib.parse import quote, urlsplit


def token(sub, secret):
    """An HS256 JWT for `sub`, valid an hour (as load_uploads.py mints them)."""
    def b64(data):
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64(json.dumps({"sub": sub, "exp": int(time.time()) + 3600}).encode())
    signature = hmac.new(secret.encode(), f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64(signature)}"


class Refused(Exception):
    pass


class Connection:
    """One keep-alive HTTP/1.1 connection; reconnects when the server closed it."""

    def __init__(self, host, port, timeout):
        self.host, self.port, self.timeout = host, port, timeout
        self.sock = self.reader = None

    def close(self):
        if self.reader:
            self.reader.close()
        if self.sock:
            self.sock.close()
        self.sock = self.reader = None

    def _connect(self):
        self.sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = self.sock.makefile("rb")

    def _head(self):
        line = self.reader.readline().decode("latin-1")
        if not line:
            raise ConnectionError("the server closed the connection")
        status = int(line.split(" ", 2)[1])
        headers = {}
        while True:
            line = self.reader.readline().decode("latin-1")
            if line in ("\r\n", "\n", ""):
                break
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return status, headers

    def request(self, method, path, headers, file=None, offset=0, count=0):
        """Sends a request (a body of `count` bytes of `file` from `offset`, by sendfile); returns the
        final (status, headers, body), 1xx interim answers skipped."""
        if self.sock is None:
            self._connect()
        head = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}"]
        head += [f"{name}: {value}" for name, value in headers.items()]
        head.append(f"Content-Length: {count}")
        self.sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        if count:
            sent = self.sock.sendfile(file, offset, count)
            if sent != count:
                raise ConnectionError(f"sent {sent} of {count} bytes")
        status, response = self._head()
        while 100 <= status < 200:
            status, response = self._head()
        length = int(response.get("content-length", "0") or 0)
        body = self.reader.read(length) if method != "HEAD" and length else b""
        if response.get("connection", "").lower() == "close":
            self.close()
        return status, response, body


def upload(protocol, base, key, user, path, chunk_size, secret, timeout, tally):
    """One upload; returns (bytes, seconds of the final answer since it began) or raises."""
    url = urlsplit(base)
    size = os.path.getsize(path)
    auth = {"Authorization": f"Bearer {token(user, secret)}"}
    connection = Connection(url.hostname, url.port, timeout)

    def send(method, target, headers, file=None, offset=0, count=0):
        reused = connection.sock is not None
        try:
            status, response, body = connection.request(method, target, headers, file, offset, count)
        except (ConnectionError, OSError):
            connection.close()
            if not reused:
                raise
            # Once more on a fresh connection: the server may have closed the kept-alive one.
            status, response, body = connection.request(method, target, headers, file, offset, count)
        tally(f"{method} {status}")
        return status, response, body

    def settle(status, response, head_path, head_headers):
        """A final request answered 503/423: wait as told, then HEAD (which finishes the upload)."""
        for _ in range(20):
            if status not in (503, 423):
                return status
            time.sleep(min(10.0, float(response.get("retry-after", "1") or 1)))
            status, response, _ = send("HEAD", head_path, head_headers)
            if status in (200, 204) and int(response.get("upload-offset", "-1")) != size:
                raise Refused(f"HEAD after a retry says {response.get('upload-offset')} of {size} bytes")
        return status

    try:
        with open(path, "rb") as file:
            if protocol == "tus":
                tus = {**auth, "Tus-Resumable": "1.0.0"}
                metadata = "key " + base64.b64encode(key.encode()).decode()
                status, response, body = send("POST", "/files/", {**tus, "Upload-Length": str(size), "Upload-Metadata": metadata})
                if status != 201 or "location" not in response:
                    raise Refused(f"POST /files/ answered {status}: {body[:200]!r}")
                location = urlsplit(response["location"]).path
                offset = 0
                while offset < size:
                    count = min(chunk_size or size, size - offset)
                    status, response, body = send(
                        "PATCH", location, {**tus, "Upload-Offset": str(offset), "Content-Type": "application/offset+octet-stream"},
                        file, offset, count)
                    if offset + count == size:
                        status = settle(status, response, location, tus)
                    if status not in (200, 204):
                        raise Refused(f"PATCH at {offset} answered {status}: {body[:200]!r}")
                    offset += count
            else:
                draft = {**auth, "Upload-Draft-Interop-Version": "6"}
                status, response, body = send(
                    "POST", "/uploads/" + quote(key), {**draft, "Upload-Complete": "?1", "Content-Type": "image/jpeg"}, file, 0, size)
                if status in (503, 423) and "location" in response:
                    status = settle(status, response, urlsplit(response["location"]).path, draft)
                if status not in (200, 201):
                    raise Refused(f"POST /uploads/ answered {status}: {body[:200]!r}")
    finally:
        connection.close()
    return size


def percentile(values, fraction):
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(fraction * len(ordered)))], 3)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("protocol", choices=["tus", "draft"])
    parser.add_argument("base", help="the server, e.g. http://127.0.0.1:8080")
    parser.add_argument("files", nargs="+")
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--chunk-size", type=int, default=0, help="tus PATCH size; 0: the whole file in one PATCH")
    parser.add_argument("--timeout", type=float, default=600, help="seconds for the whole run (and each socket operation)")
    args = parser.parse_args()
    secret = os.environ["PHOTOPREP_JWT_SECRET"]

    statuses, lock = {}, threading.Lock()

    def tally(what):
        with lock:
            statuses[what] = statuses.get(what, 0) + 1

    released = []
    start = threading.Barrier(args.count + 1, action=lambda: released.append(time.monotonic()))
    results = [None] * args.count

    def run(i):
        user = f"bench{i}"
        key = f"user_photos/{user}/bench/{i}.jpg"
        path = args.files[i % len(args.files)]
        start.wait()
        began = time.monotonic()
        try:
            size = upload(args.protocol, args.base, key, user, path, args.chunk_size, secret, args.timeout, tally)
            results[i] = {"key": key, "bytes": size, "done": time.monotonic(), "latency": time.monotonic() - began}
        except Exception as error:  # noqa: BLE001 - every failure is reported
            results[i] = {"key": key, "error": f"{type(error).__name__}: {error}"}

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(args.count)]
    for thread in threads:
        thread.start()
    start.wait(timeout=60)  # all threads ready: go
    deadline = released[0] + args.timeout
    for thread in threads:
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
    finished = [r for r in results if r and "error" not in r]
    failed = [r if r else {"key": f"user_photos/bench{i}/bench/{i}.jpg", "error": "still running at the deadline"}
              for i, r in enumerate(results) if not r or "error" in r]
    seconds = (max(r["done"] for r in finished) - released[0]) if finished else None
    total = sum(r["bytes"] for r in finished)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({
        "protocol": args.protocol, "count": args.count, "ok": len(finished), "failed": failed, "bytes": total,
        "seconds": round(seconds, 3) if seconds else None,
        "mb_per_s": round(total / 1e6 / seconds, 2) if seconds else 0,
        "photos_per_s": round(len(finished) / seconds, 2) if seconds else 0,
        "latency_s": {"min": percentile([r["latency"] for r in finished], 0.0),
                      "p50": percentile([r["latency"] for r in finished], 0.5),
                      "p90": percentile([r["latency"] for r in finished], 0.9),
                      "max": percentile([r["latency"] for r in finished], 1.0)},
        "statuses": dict(sorted(statuses.items())),
        "client_cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
    }))
    return 0 if not failed else 1


if __name__ == "__main__":
    raise SystemExit(main())
