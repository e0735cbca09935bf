"""Upload latency against a running `photoprep serve` on 127.0.0.1:PORT: each FILE uploaded in one tus request
(creation with upload: POST /files/ with the whole body, answered once the photo is prepared, reviewed, stored and
recorded), one after the other on one keep-alive connection, each as its own user's album photo, tokens signed with
SECRET (HS256). Prints one JSON line: each upload's milliseconds, in FILE order."""
import base64
import hashlib
import hmac
import http.client
import json
import sys
import time

port, secret, files = int(sys.argv[1]), sys.argv[2].encode(), sys.argv[3:]


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token(sub):
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = b64(json.dumps({"sub": sub, "exp": int(time.time()) + 3600}).encode())
    return f"{head}.{claims}.{b64(hmac.new(secret, f'{head}.{claims}'.encode(), hashlib.sha256).digest())}"


connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
times = []
for i, path in enumerate(files):
    body = open(path, "rb").read()
    user = f"review{i}"
    metadata = "key " + base64.b64encode(f"user_photos/{user}/bench/{i}.jpg".encode()).decode()
    headers = {"Tus-Resumable": "1.0.0", "Authorization": "Bearer " + token(user), "Upload-Length": str(len(body)),
               "Upload-Metadata": metadata, "Content-Type": "application/offset+octet-stream"}
    started = time.perf_counter()
    connection.request("POST", "/files/", body=body, headers=headers)
    response = connection.getresponse()
    response.read()
    times.append((time.perf_counter() - started) * 1000)
    if response.status != 201:
        sys.exit(f"{path}: {response.status}")
print(json.dumps(times))
