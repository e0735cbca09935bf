"""The app's backend for Benchmarks/hooks.sh on 127.0.0.1:PORT: accepts every upload (`{"accept": true}`) after
reading the question, as a backend that checks nothing would — what is measured is the asking. Keep-alive, as a
backend behind a real HTTP server is."""
import http.server
import json
import sys


class Hook(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The answer's head and body go out as two writes: without TCP_NODELAY the body waits for the client's delayed
    # ACK of the head, 40 ms an answer on Linux (measured here: 44 ms a creation instead of 2).
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def do_POST(self):
        json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        answer = json.dumps({"accept": True}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Hook).serve_forever()
