"""The app's review for Benchmarks/review.sh on 127.0.0.1:PORT: reads each question, decodes the photo's bytes from
base64 (as a moderation service must before looking at them), and accepts. Keep-alive, TCP_NODELAY."""
import base64
import http.server
import json
import sys


class Review(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def do_POST(self):
        question = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        base64.b64decode(question["photo"]["bytes"])
        answer = json.dumps({"verdict": "accept"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Review).serve_forever()
