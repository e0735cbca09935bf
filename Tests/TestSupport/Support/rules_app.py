"""The integration tests' storage server: tuspyserver (tus 1.0) under uvicorn on 127.0.0.1, enforcing
the app's storage rules server-side, like Firebase Storage rules. They mirror
Sources/PhotoServices/Rules/StorageRules.swift; the Swift tests check that both agree.

  RULES_SECRET   the HS256 secret of the bearer tokens (JWTs: `sub` is the user, `exp` is required)
  RULES_DB       the services' SQLite file (group admins are read from it)
  TUS_DIR        where uploads are stored

Every request needs a valid token (401). Creating an upload also needs the key in the metadata to be
a path the token's user may write (403), an image/jpeg (415) and a length under the path's limit (413).

A test double of a third-party tus server with rules (the real one is `photoprep serve`, tested in
Tests/PhotoServerTests); the services' tests upload to it.
"""
import base64
import hashlib
import hmac
import json
import os
import sqlite3
import time

from fastapi import Depends, FastAPI, HTTPException, Request
from tuspyserver import create_tus_router

SECRET = os.environ["RULES_SECRET"].encode()
DATABASE = os.environ["RULES_DB"]
MIB = 1024 * 1024


def unbase64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def user_of(request: Request):
    """The `sub` of a valid HS256 JWT in `Authorization: Bearer`."""
    header = request.headers.get("authorization", "")
    if not header.startswith("Bearer ") or header.count(".") != 2:
        raise HTTPException(status_code=401, detail="missing bearer token")
    head, payload, signature = header[len("Bearer "):].split(".")
    try:
        alg = json.loads(unbase64url(head)).get("alg")
        claims = json.loads(unbase64url(payload))
        given = unbase64url(signature)
    except ValueError:
        raise HTTPException(status_code=401, detail="malformed bearer token")
    expected = hmac.new(SECRET, f"{head}.{payload}".encode(), hashlib.sha256).digest()
    if alg != "HS256" or not hmac.compare_digest(given, expected):
        raise HTTPException(status_code=401, detail="invalid bearer token")
    if not isinstance(claims.get("exp"), (int, float)) or claims["exp"] < time.time() or not claims.get("sub"):
        raise HTTPException(status_code=401, detail="expired or incomplete bearer token")
    return claims["sub"]


def valid_segment(segment):
    return (segment not in ("", ".", "..") and "/" not in segment and "\\" not in segment
            and all(ord(c) >= 0x20 and not 0x7F <= ord(c) <= 0x9F for c in segment) and len(segment.encode()) <= 128)


def is_admin(user, group):
    with sqlite3.connect(f"file:{DATABASE}?mode=ro", uri=True) as db:
        row = db.execute("SELECT isAdmin FROM groupMember WHERE groupId = ? AND userId = ?", (group, user)).fetchone()
    return bool(row and row[0])


def check(user, key, length, content_type):
    parts = key.split("/")
    if not all(valid_segment(p) for p in parts[1:]):
        raise HTTPException(status_code=403, detail=f"invalid path {key!r}")
    if parts[0] == "group_photos" and len(parts) == 3 and parts[2] == "photo.jpg":
        if not is_admin(user, parts[1]):
            raise HTTPException(status_code=403, detail=f"{user} is not an admin of group {parts[1]}")
        limit = 5 * MIB
    elif parts[0] == "profile_images" and len(parts) == 3:
        if parts[1] != user:
            raise HTTPException(status_code=403, detail=f"{user} may not write to {key}")
        limit = 5 * MIB
    elif parts[0] == "user_photos" and len(parts) == 4:
        if parts[1] != user:
            raise HTTPException(status_code=403, detail=f"{user} may not write to {key}")
        limit = 10 * MIB
    else:
        raise HTTPException(status_code=403, detail=f"{key!r} is not a storage path photos may be written to")
    if content_type != "image/jpeg":
        raise HTTPException(status_code=415, detail="uploads must be image/jpeg")
    if length is None or length >= limit:
        raise HTTPException(status_code=413, detail=f"uploads to {parts[0]} must be smaller than {limit} bytes")


async def rules(request: Request):
    user = user_of(request)

    def hook(metadata, info):
        check(user, metadata.get("key", ""), info.get("size"), metadata.get("content-type") or metadata.get("filetype"))

    return hook


async def authenticated(request: Request):
    user_of(request)


app = FastAPI()
app.include_router(create_tus_router(
    prefix="files", files_dir=os.environ.get("TUS_DIR", "/tmp/rules-tus"), max_size=16 * MIB,
    auth=authenticated, pre_create_dep=rules))
