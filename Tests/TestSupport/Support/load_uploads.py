#!/usr/bin/env python3
"""A load test from a second process: N uploads at once with tuspy (one thread and one connection
each), every one its own user with an HS256 token minted from PHOTOPREP_JWT_SECRET. Even-numbered
uploads go to profile_images/load{i}/me.jpg, odd ones to user_photos/load{i}/trip/{i}.jpg. Prints
{"ok": n, "failed": [{"key", "error"}...], "seconds": s, "uploads": [{"key", "user", "file", "url"}...]}.

  load_uploads.py ENDPOINT FILE... [--count 100] [--chunk-size BYTES]
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import threading
import time

from tusclient import client


def token(sub, secret):
    def b64(data):
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64(json.dumps({"sub": sub, "exp": int(time.time()) + 3600}).encode())
    signature = hmac.new(secret.encode(), f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64(signature)}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("endpoint")
    parser.add_argument("files", nargs="+")
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--chunk-size", type=int, default=256 * 1024)
    args = parser.parse_args()
    secret = os.environ["PHOTOPREP_JWT_SECRET"]
    start = threading.Barrier(args.count)
    results = [None] * args.count

    def upload(i):
        user = f"load{i}"
        key = f"profile_images/{user}/me.jpg" if i % 2 == 0 else f"user_photos/{user}/trip/{i}.jpg"
        file = args.files[i % len(args.files)]
        tus = client.TusClient(args.endpoint, headers={"Authorization": f"Bearer {token(user, secret)}"})
        start.wait()  # all at once
        try:
            uploader = tus.uploader(file_path=file, chunk_size=args.chunk_size, metadata={"key": key})
            uploader.upload()
            results[i] = {"key": key, "user": user, "file": file, "url": uploader.url}
        except Exception as error:  # noqa: BLE001 - every failure is reported
            results[i] = {"key": key, "user": user, "file": file, "error": f"{type(error).__name__}: {error}"}

    began = time.monotonic()
    threads = [threading.Thread(target=upload, args=(i,)) for i in range(args.count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    failed = [r for r in results if "error" in r]
    print(json.dumps({"ok": len(results) - len(failed), "failed": failed, "seconds": round(time.monotonic() - began, 2),
                      "uploads": [r for r in results if "error" not in r]}))


if __name__ == "__main__":
    main()
