"""The app's backend for the upload hook tests, on 127.0.0.1:PORT. Each POST's path says how it answers:
/accept {"accept": true}; /refuse 200 {"accept": false, "status": 451, "message": "no photos of that, Ana"};
/refuse-plain {"accept": false} (no status or message); /slow sleeps 60 s first; /error 500; /reset cuts the
connection, no answer; /garbage 200 and not JSON. Each request (path, headers' Content-Type, JSON body) is appended
as a line to RECORD."""
import http.server
import json
import socket
import struct
import sys
import time

port, record = int(sys.argv[1]), sys.argv[2]


def reset(handler):
    """Cuts the connection without an answer: a TCP reset (linger 0), as a receiver that crashes mid-request."""
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.connection.close()
    handler.close_connection = True


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with open(record, "a") as out:
            out.write(json.dumps({"path": self.path, "contentType": self.headers.get("Content-Type"), "body": json.loads(body)}) + "\n")
        if self.path == "/accept":
            self.answer(200, json.dumps({"accept": True}))
        elif self.path == "/refuse":
            self.answer(200, json.dumps({"accept": False, "status": 451, "message": "no photos of that, Ana"}))
        elif self.path == "/refuse-plain":
            self.answer(200, json.dumps({"accept": False}))
        elif self.path == "/slow":
            time.sleep(60)
            self.answer(200, json.dumps({"accept": True}))
        elif self.path == "/reset":
            reset(self)
        elif self.path == "/error":
            self.answer(500, json.dumps({"error": "down for maintenance"}))
        else:
            self.answer(200, "<html>not json</html>")


http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
