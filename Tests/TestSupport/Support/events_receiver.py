"""An app's event receiver for the events tests, on 127.0.0.1:PORT. Each delivery's Standard Webhooks signature is
verified with the standardwebhooks package against each secret in SECRETS (space-separated); the ids of events it
accepted are kept, and a delivery of one of them again is recorded as a duplicate. It answers as the path says: /ok
204; /fail 500 (204 once a file RECORD.healed exists); /flaky 500 to the first delivery of each event, then 204;
/cut resets the connection of the first delivery of each event (no answer, status 0 in RECORD), then 204. Each
delivery is appended to RECORD as a line: path, id, verifiedBy (the indexes of the secrets that verify it),
duplicate, status, body."""
import http.server
import json
import os
import socket
import struct
import sys
import threading

from standardwebhooks.webhooks import Webhook

port, record, secrets = int(sys.argv[1]), sys.argv[2], sys.argv[3].split()
hooks = [Webhook(secret) for secret in secrets]
accepted, tried, lock = set(), set(), threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        headers = {name.lower(): value for name, value in self.headers.items()}
        verified = []
        for index, hook in enumerate(hooks):
            try:
                hook.verify(body, headers)
                verified.append(index)
            except Exception:
                pass
        event = headers.get("webhook-id", "")
        with lock:
            duplicate = event in accepted
            healed = self.path == "/fail" and os.path.exists(record + ".healed")
            if self.path == "/ok" or healed or (self.path in ("/flaky", "/cut") and event in tried):
                status = 204
            elif self.path == "/cut":
                status = 0
            else:
                status = 500
            tried.add(event)
            if status == 204:
                accepted.add(event)
            with open(record, "a") as out:
                out.write(json.dumps({"path": self.path, "id": event, "verifiedBy": verified, "duplicate": duplicate, "status": status,
                                      "body": json.loads(body)}) + "\n")
        if status == 0:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()


http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
