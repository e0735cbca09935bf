#!/usr/bin/env python3
"""An upload by the IETF resumable-upload draft (draft-ietf-httpbis-resumable-upload), written from
the draft's text with raw sockets — independent of the project's client — and interrupted:

  draft_upload.py BASE_URL KEY FILE --token T --version {3,5,6} [--cut-after BYTES]

1. Upload creation: POST BASE_URL/uploads/KEY with the whole file's Content-Length and
   Upload-Complete: ?1 (interop version 3: Upload-Incomplete: ?0). The 104 (Upload Resumption
   Supported) interim response names the upload's URL (Location).
2. The connection is closed after --cut-after bytes of the body (default: half the file).
3. Offset retrieval: HEAD on the upload's URL, until the offset stops moving (the server is still
   flushing what it received) — at most 5 s.
4. Upload append: PATCH from that offset with the rest (Upload-Complete: ?1; interop version 6:
   Content-Type: application/partial-upload).

Prints one JSON object: {"interim": status, "location", "offset", "status", "headers", "body"}.
"""
import argparse
import json
import socket
import sys
import time
from urllib.parse import quote, urlsplit


def read_response(sock_file):
    """One response head: (status, {lowercase name: value})."""
    line = sock_file.readline().decode("latin-1")
    if not line:
        raise ConnectionError("the server closed the connection")
    status = int(line.split(" ", 2)[1])
    headers = {}
    while True:
        line = sock_file.readline().decode("latin-1")
        if line in ("\r\n", "\n", ""):
            break
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers


def request(host, port, method, path, headers, body=b""):
    """A whole request and its final response (interim responses skipped): (status, headers, body)."""
    with socket.create_connection((host, port), timeout=30) as sock:
        head = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}", "Connection: close"]
        head += [f"{name}: {value}" for name, value in headers.items()]
        head.append(f"Content-Length: {len(body)}")
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        sock_file = sock.makefile("rb")
        status, response_headers = read_response(sock_file)
        while 100 <= status < 200:
            status, response_headers = read_response(sock_file)
        length = int(response_headers.get("content-length", "0") or 0)
        payload = sock_file.read(length) if method != "HEAD" and length else b""
        return status, response_headers, payload


def completeness(version, complete):
    if version >= 5:
        return {"Upload-Complete": "?1" if complete else "?0"}
    return {"Upload-Incomplete": "?0" if complete else "?1"}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("key")
    parser.add_argument("file")
    parser.add_argument("--token", required=True)
    parser.add_argument("--version", type=int, choices=[3, 5, 6], default=6)
    parser.add_argument("--cut-after", type=int)
    parser.add_argument("--query", default="", help="appended to the creation's URL, e.g. focus=-0.85,0")
    args = parser.parse_args()

    data = open(args.file, "rb").read()
    cut = args.cut_after if args.cut_after is not None else len(data) // 2
    base = urlsplit(args.base)
    host, port = base.hostname, base.port
    common = {"Authorization": f"Bearer {args.token}", "Upload-Draft-Interop-Version": str(args.version)}

    # 1–2: the creation, cut off.
    sock = socket.create_connection((host, port), timeout=30)
    head = [f"POST /uploads/{quote(args.key)}{'?' + args.query if args.query else ''} HTTP/1.1", f"Host: {host}:{port}", f"Content-Length: {len(data)}",
            "Content-Type: image/jpeg"]
    head += [f"{name}: {value}" for name, value in {**common, **completeness(args.version, True)}.items()]
    sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
    sock_file = sock.makefile("rb")
    sock.sendall(data[:cut])
    interim, interim_headers = read_response(sock_file)
    location = interim_headers.get("location")
    sock_file.close()  # (the socket closes only when its file objects are closed too)
    sock.shutdown(socket.SHUT_RDWR)
    sock.close()
    if interim != 104 or not location:
        print(json.dumps({"interim": interim, "location": location, "error": "no 104 with a Location"}))
        return 1
    path = urlsplit(location).path

    # 3: where does the server stand?
    offset, deadline = None, time.time() + 5
    while time.time() < deadline:
        status, headers, _ = request(host, port, "HEAD", path, common)
        if status not in (200, 204):
            print(json.dumps({"interim": interim, "location": location, "error": f"HEAD answered {status}", "headers": headers}))
            return 1
        now = int(headers["upload-offset"])
        if now == offset and now > 0:
            break
        offset = now
        time.sleep(0.2)

    # 4: the rest.
    append = {**common, **completeness(args.version, True), "Upload-Offset": str(offset)}
    append["Content-Type"] = "application/partial-upload" if args.version >= 6 else "application/octet-stream"
    status, headers, body = request(host, port, "PATCH", path, append, data[offset:])
    print(json.dumps({"interim": interim, "location": location, "offset": offset, "status": status, "headers": headers,
                      "body": body.decode("utf-8", "replace")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
