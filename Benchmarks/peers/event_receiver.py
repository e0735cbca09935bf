"""The app's event receiver for Benchmarks/events.sh on 127.0.0.1:PORT: answers 204 to every delivery after reading it,
as a receiver that queues events for later work would, and appends each delivery's webhook-id to FILE (one a line) so
that the script can count what arrived. Keep-alive, TCP_NODELAY."""
import http.server
import sys
import threading

port, record = int(sys.argv[1]), sys.argv[2]
lock = threading.Lock()


class Receiver(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        with lock, open(record, "a") as out:
            out.write(self.headers.get("webhook-id", "") + "\n")
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()


http.server.ThreadingHTTPServer(("127.0.0.1", port), Receiver).serve_forever()
