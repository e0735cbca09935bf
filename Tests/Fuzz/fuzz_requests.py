#!/usr/bin/env python3
"""Hostile requests to a running `photoprep serve`, out of band: tus 1.0 and draft uploads, /v1, media and the page,
with headers drawn from numbers and strings that break parsers (Int64 bounds, signs, non-ASCII digits, 9 KB values,
bad base64 metadata, odd ranges and dates), bad or forged tokens (alg none, another secret, long subjects) and random or
half bodies. Prints the statuses seen and every 5xx but 503, then the server's /health.

  Tests/Fuzz/fuzz_requests.py HOST PORT JWT_SECRET SEED COUNT
  e.g. (with PHOTOPREP_JWT_SECRET set) photoprep serve --data /tmp/d --port 8080 --writes-per-address 0 \\
         --max-connections-per-address 0 --writes-per-user 0 &  Tests/Fuzz/fuzz_requests.py 127.0.0.1 8080 "$PHOTOPREP_JWT_SECRET" 1 5000
"""
import base64, http.client, json, os, random, socket, sys, collections
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "Benchmarks", "peers"))
from ingest_load import token  # the HS256 token the ingest benchmark's load client mints
host, port, secret, seed, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
rng = random.Random(seed)
def tok(sub): return token(sub, secret)
NUMS = ["0", "-1", "1", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "18446744073709551616", "1e9", "0x10",
        " 5", "5 ", "+5", "١٢", "99999999999999999999999999", "", "10485760", "10485761", "5242880", "3.5", "NaN"]
STRS = ["", " ", "\t", "a" * 9000, "%00", "../../etc/passwd", "..%2F..%2F", "?1", "?0", "?2", "1", "true", "sha1 xxx", "sha256 " + "A" * 44,
        "bytes=0-", "bytes=-0", "bytes=5-1", "bytes=0-9223372036854775807", "bytes=-9223372036854775807", "bytes=1-2,3-4", "bytes=٣-٤",
        "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Thu, 31 Dec 9999 23:59:59 GMT",
        "Mon, 99 Foo 99999 99:99:99 GMT", "*", "\"x\"", "W/\"x\"", "filename " + base64.b64encode(b"a.jpg").decode(),
        "key " + base64.b64encode(b"user_photos/u1/a/b.jpg").decode(), "key !!!", "key " + base64.b64encode(os.urandom(50)).decode(),
        "key " + base64.b64encode(b"profile_images/u1/\xc3\xa9.jpg").decode(), "key,filename", "1.0.0", "0.2.2", "6", "-1", "999999"]
def val(): return rng.choice(NUMS + STRS)
users = ["u1", "u2", "u3"]
def auth():
    r = rng.random()
    if r < 0.7: return "Bearer " + tok(rng.choice(users))
    return rng.choice(["", "Bearer", "Bearer x.y.z", "Bearer " + "a" * 10000, "Basic dTE6cA==", "Bearer " + token("u1", "not the secret"),
                       "Bearer " + tok("../u1"), "Bearer " + tok("u1" * 200), "Bearer " + tok("u1").replace("HS256", "none")])
jpeg = open(os.path.join(here, "..", "..", "TestImages", "orientation", "landscape_6.jpg"), "rb").read()
locations = []
statuses = collections.Counter(); five = []
def send(method, path, headers, body=b""):
    c = http.client.HTTPConnection(host, port, timeout=30)
    try:
        c.putrequest(method, path, skip_accept_encoding=True)
        for k, v in headers.items():
            try: c.putheader(k, v)
            except Exception: pass
        if body is not None and "Content-Length" not in headers: c.putheader("Content-Length", str(len(body)))
        c.endheaders(); 
        if body: c.send(body)
        r = c.getresponse(); data = r.read(); statuses[r.status] += 1
        if r.status >= 500 and r.status != 503: five.append((method, path, headers, r.status, data[:300]))
        return r
    except (ConnectionError, socket.timeout, http.client.HTTPException) as e:
        statuses[type(e).__name__] += 1
    finally: c.close()
paths = ["/files", "/files/", "/files/" + "0" * 32, "/files/../x", "/uploads/profile_images/u1/a.jpg", "/uploads/user_photos/u1/al/x.jpg",
         "/uploads/group_photos/g/photo.jpg", "/uploads/" + "a/" * 300, "/uploads/%2e%2e/%2e%2e/x", "/v1/me", "/v1/users?prefix=" + "%" ,
         "/v1/users?limit=-1&after=99999999999999999999", "/v1/groups?cursor=!!!", "/v1/groups/" + "x" * 5000, "/v1/me/photo",
         "/media/profile_images/u1/a.jpg", "/media/../app.sqlite", "/web/..%2f..%2fapp.sqlite", "/v1/albums/a/photos?cursor=%ff", "/"]
for i in range(n):
    kind = rng.random()
    h = {"Authorization": auth()} if rng.random() < 0.95 else {}
    if rng.random() < 0.8: h["Tus-Resumable"] = rng.choice(["1.0.0", "1.0.0", val()])
    for k in rng.sample(["Upload-Length", "Upload-Offset", "Upload-Metadata", "Upload-Checksum", "Upload-Defer-Length", "Upload-Complete",
                         "Upload-Draft-Interop-Version", "Content-Type", "Range", "If-Range", "If-None-Match", "If-Modified-Since",
                         "Origin", "X-Forwarded-For", "Content-Length", "Upload-Concat"], rng.randint(0, 6)):
        h[k] = val()
    if kind < 0.35:
        if rng.random() < 0.7: h["Upload-Length"] = rng.choice([str(len(jpeg)), val()])
        if rng.random() < 0.7: h["Upload-Metadata"] = "key " + base64.b64encode(rng.choice([b"profile_images/u1/p.jpg", b"user_photos/u1/a/p.jpg", b"group_photos/g1/photo.jpg", os.urandom(8)])).decode()
        r = send("POST", "/files/", h, b"" if rng.random() < .7 else jpeg[: rng.randrange(len(jpeg))])
        if r is not None and r.getheader("Location"): locations.append(r.getheader("Location"))
    elif kind < 0.6 and locations:
        loc = rng.choice(locations); path = "/" + loc.split("/", 3)[3] if loc.startswith("http") else loc
        h["Content-Type"] = rng.choice(["application/offset+octet-stream"] * 3 + [val()])
        h["Upload-Offset"] = rng.choice(["0"] * 3 + [val()])
        start = rng.randrange(len(jpeg)); body = jpeg[start: start + rng.randrange(1, 200000)] if rng.random() < .5 else jpeg
        send(rng.choice(["PATCH"] * 4 + ["HEAD", "DELETE", "GET", "OPTIONS"]), path, h, body)
    elif kind < 0.8:
        h["Upload-Draft-Interop-Version"] = rng.choice(["6", "6", val()])
        body = jpeg if rng.random() < .5 else jpeg[: rng.randrange(len(jpeg))]
        send(rng.choice(["POST", "POST", "PATCH", "HEAD", "OPTIONS", "DELETE"]), rng.choice(paths[4:9]), h, body)
    else:
        body = json.dumps(rng.choice([{}, {"name": "x" * rng.randint(0, 60), "participants": [rng.choice(users + ["", "../x", "u1"*100]) for _ in range(rng.randint(0, 300))]},
                                      {"displayName": val()}, [], "x", None, {"add": [val()]}])).encode() if rng.random() < .6 else os.urandom(rng.randint(0, 3000))
        send(rng.choice(["GET", "GET", "POST", "PATCH", "DELETE", "HEAD", "PUT"]), rng.choice(paths[9:] + ["/v1/groups", "/v1/groups/g1/members", "/v1/me/photo/token"]), h, body)
print("statuses", dict(statuses)); print("5xx", len(five))
for f in five[:15]: print(f)
c = http.client.HTTPConnection(host, port, timeout=10); c.request("GET", "/health"); print("health", c.getresponse().status)
