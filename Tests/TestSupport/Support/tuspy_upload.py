#!/usr/bin/env python3
"""Uploads one file with tuspy, the tus project's own Python client (PyPI), and prints the outcome as
one JSON object: {"ok": true, "url": ...} or {"ok": false, "status": HTTP status or null, "error": ...}.

  tuspy_upload.py ENDPOINT KEY FILE [--token T] [--chunk-size BYTES] [--checksum] [--retries N] [--metadata NAME=VALUE ...]
"""
import argparse
import json

from tusclient import client
from tusclient.exceptions import TusCommunicationError, TusUploadFailed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("endpoint")
    parser.add_argument("key")
    parser.add_argument("file")
    parser.add_argument("--token")
    parser.add_argument("--chunk-size", type=int, default=1 << 20)
    parser.add_argument("--checksum", action="store_true")
    parser.add_argument("--retries", type=int, default=0)
    parser.add_argument("--metadata", action="append", default=[], help="more Upload-Metadata, e.g. focus=-0.5,0.25")
    args = parser.parse_args()
    extra = dict(item.split("=", 1) for item in args.metadata)
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
    tus = client.TusClient(args.endpoint, headers=headers)
    uploader = tus.uploader(
        file_path=args.file, chunk_size=args.chunk_size, metadata={"key": args.key, "filename": args.key.split("/")[-1], **extra},
        upload_checksum=args.checksum, retries=args.retries, retry_delay=0.5)
    try:
        uploader.upload()
        print(json.dumps({"ok": True, "url": uploader.url, "offset": uploader.offset}))
    except (TusCommunicationError, TusUploadFailed) as error:
        print(json.dumps({"ok": False, "status": getattr(error, "status_code", None), "error": str(error),
                          "body": (getattr(error, "response_content", None) or b"").decode("utf-8", "replace")}))


if __name__ == "__main__":
    main()
