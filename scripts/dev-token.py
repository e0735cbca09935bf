#!/usr/bin/env python3
"""Prints an HS256 JWT for trying `photoprep serve` locally, signed with PHOTOPREP_JWT_SECRET (the same
secret the server verifies with). In production the identity provider issues tokens; nothing in
photoprep mints them.

  scripts/dev-token.py USER_ID [--name "Display Name"] [--seconds 3600]
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import sys
import time


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sub")
    parser.add_argument("--name")
    parser.add_argument("--seconds", type=int, default=3600)
    args = parser.parse_args()
    secret = os.environ.get("PHOTOPREP_JWT_SECRET")
    if not secret:
        sys.exit("dev-token.py: set PHOTOPREP_JWT_SECRET (the server's HS256 secret)")
    claims = {"sub": args.sub, "iat": int(time.time()), "exp": int(time.time()) + args.seconds}
    if args.name:
        claims["name"] = args.name
    signing_input = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()) + "." + b64url(json.dumps(claims).encode())
    signature = hmac.new(secret.encode(), signing_input.encode(), hashlib.sha256).digest()
    print(signing_input + "." + b64url(signature))


if __name__ == "__main__":
    main()
