"""Upload creation latency against a running `photoprep serve` on 127.0.0.1:PORT: COUNT tus creations (POST /files/,
no body), one user each (the per-user limits never bind), one after the other on one keep-alive connection, tokens
signed with SECRET (HS256). Prints one JSON line: p50 and p99 in milliseconds."""
import base64
import http.client
import json
import statistics
import sys
import time

from ingest_load import token  # the same HS256 tokens as the ingest load

port, count, secret = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]


connection = http.client.HTTPConnection("127.0.0.1", port)
times = []
for i in range(count):
    user = f"hook{i}"
    metadata = "key " + base64.b64encode(f"user_photos/{user}/bench/{i}.jpg".encode()).decode()
    headers = {"Tus-Resumable": "1.0.0", "Authorization": "Bearer " + token(user, secret), "Upload-Length": "695070", "Upload-Metadata": metadata}
    started = time.perf_counter()
    connection.request("POST", "/files/", headers=headers)
    response = connection.getresponse()
    response.read()
    times.append((time.perf_counter() - started) * 1000)
    if response.status != 201:
        sys.exit(f"creation {i}: {response.status}")
times.sort()
print(json.dumps({"p50": statistics.median(times), "p99": times[max(0, int(len(times) * 0.99) - 1)]}))
