"""Upload latency against a running `photoprep serve` on 127.0.0.1:PORT: each FILE uploaded in one tus request
(creation with upload: POST /files/ with the whole body, answered once the photo is prepared, reviewed, stored and
recorded), one after the other on one keep-alive connection, each as its own user's album photo, tokens signed with
SECRET (HS256). Prints one JSON line: each upload's milliseconds, in FILE order."""
import base64
import http.client
import json
import sys
import time

from ingest_load import token  # the same HS256 tokens as the ingest load

port, secret, files = int(sys.argv[1]), sys.argv[2], sys.argv[3:]


connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
times = []
for i, path in enumerate(files):
    body = open(path, "rb").read()
    user = f"review{i}"
    metadata = "key " + base64.b64encode(f"user_photos/{user}/bench/{i}.jpg".encode()).decode()
    headers = {"Tus-Resumable": "1.0.0", "Authorization": "Bearer " + token(user, secret), "Upload-Length": str(len(body)),
               "Upload-Metadata": metadata, "Content-Type": "application/offset+octet-stream"}
    started = time.perf_counter()
    connection.request("POST", "/files/", body=body, headers=headers)
    response = connection.getresponse()
    response.read()
    times.append((time.perf_counter() - started) * 1000)
    if response.status != 201:
        sys.exit(f"{path}: {response.status}")
print(json.dumps(times))
