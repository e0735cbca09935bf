"""The app's review for the review hook tests, on 127.0.0.1:PORT. Each POST's path says how it answers: /accept
{"verdict": "accept"}; /reject {"verdict": "reject", "reason": "nudity is not allowed here"}; /quarantine
{"verdict": "quarantine", "reason": "needs a second look"}; /slow sleeps 60 s first; /error 500; /reset cuts the
connection, no answer; /garbage 200 and not JSON. Each request is appended to RECORD as a line: the path, and the JSON body with the photo's bytes replaced by
what they are — bytesLength, bytesSha256 (of the base64-decoded bytes), jpeg (whether they start as a JPEG does)."""
import base64
import hashlib
import http.server
import json
import socket
import struct
import sys
import time

port, record = int(sys.argv[1]), sys.argv[2]
answers = {
    "/accept": {"verdict": "accept"},
    "/reject": {"verdict": "reject", "reason": "nudity is not allowed here"},
    "/quarantine": {"verdict": "quarantine", "reason": "needs a second look"},
}


def reset(handler):
    """Cuts the connection without an answer: a TCP reset (linger 0), as a receiver that crashes mid-request."""
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.connection.close()
    handler.close_connection = True


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def answer(self, status, text):
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        photo = body.get("photo", {})
        data = base64.b64decode(photo.pop("bytes", ""))
        photo.update(bytesLength=len(data), bytesSha256=hashlib.sha256(data).hexdigest(), jpeg=data[:3] == b"\xff\xd8\xff")
        with open(record, "a") as out:
            out.write(json.dumps({"path": self.path, "body": body}) + "\n")
        if self.path in answers:
            self.answer(200, json.dumps(answers[self.path]))
        elif self.path == "/slow":
            time.sleep(60)
            self.answer(200, json.dumps(answers["/accept"]))
        elif self.path == "/reset":
            reset(self)
        elif self.path == "/error":
            self.answer(500, json.dumps({"error": "down for maintenance"}))
        else:
            self.answer(200, "<html>not json</html>")


http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
