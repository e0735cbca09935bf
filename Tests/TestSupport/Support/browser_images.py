"""Shows photos the way an app's web view does: a page of <img src="URL"> in a real browser (Debian's
Chromium, driven by Playwright), loaded three times — a first visit, a second visit, a reload — with what
each load cost the server counted from its request log.

    browser_images.py --server-log FILE URL [URL ...]

Prints one JSON object: for each load, each image's natural width and height (0 when it did not
render) and how many `GET /media/…` the server answered with 200 and with 304 during that load.
"""
import argparse
import http.server
import json
import re
import tempfile
import threading

from playwright.sync_api import sync_playwright

MEDIA = re.compile(r"\bGET /media/\S+ (\d{3})\b")


def answered(log_path):
    """The server's answers to GET /media/… so far, by status."""
    counts = {}
    with open(log_path, encoding="utf-8", errors="replace") as log:
        for match in MEDIA.finditer(log.read()):
            counts[match.group(1)] = counts.get(match.group(1), 0) + 1
    return counts


def page_server(urls):
    """The page, served on 127.0.0.1 like any web page (a data: or about:blank page would have an
    opaque origin, whose cache the browser does not keep between visits)."""
    images = "".join(f'<img id="i{n}" src="{url}" alt="">' for n, url in enumerate(urls))
    body = f"<!doctype html><meta charset=utf-8><title>photos</title>{images}".encode()

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server-log", required=True)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("urls", nargs="+")
    args = parser.parse_args()
    server = page_server(args.urls)
    address = f"http://127.0.0.1:{server.server_address[1]}/photos.html"
    result = {}
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as p:
        browser = p.chromium.launch_persistent_context(
            profile, executable_path=args.chromium, headless=True, args=["--no-sandbox"])
        page = browser.new_page()

        def load(name, how):
            before = answered(args.server_log)
            how()
            # Every image done (rendered or failed), then their natural sizes.
            page.wait_for_function("[...document.images].every(i => i.complete)", timeout=30_000)
            sizes = page.evaluate("[...document.images].map(i => [i.naturalWidth, i.naturalHeight])")
            after = answered(args.server_log)
            result[name] = {
                "sizes": sizes,
                "ok": after.get("200", 0) - before.get("200", 0),
                "notModified": after.get("304", 0) - before.get("304", 0),
            }

        load("first", lambda: page.goto(address, wait_until="load"))
        load("second", lambda: page.goto(address, wait_until="load"))
        load("reload", lambda: page.reload(wait_until="load"))
        browser.close()
    server.shutdown()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
