"""Uses the page `photoprep serve` serves at `/` the way a person does, in a real browser (Debian's Chromium
driven by Playwright), and reports what happened as one JSON object for the Swift test to check against
the server's state.

    web_page.py --base URL --token JWT --server-log FILE --photo JPEG --small JPEG
                --allowed-port P --refused-port Q [--screenshot PNG]

The server must allow the origin http://127.0.0.1:P (--cors-origin) and not http://127.0.0.1:Q.
Uploads run on a throttled connection (the DevTools protocol's network emulation), so that progress,
cancelling and reloading happen mid-upload.
"""
import argparse
import http.server
import json
import os
import re
import tempfile
import threading
import time
from urllib.parse import urlsplit

from playwright.sync_api import sync_playwright

PATCH = re.compile(r"bytes=(\d+) .*\] PATCH /files/(\w+) (\d{3})")
UPLOAD_BYTES_PER_SECOND = 150 * 1024
# While the test cancels or reloads mid-upload: the rest of the photo takes about 11 s to send, time enough for the
# test's clicks on a loaded machine (at 150 KB/s the window was under 3 s).
INTERRUPTED_BYTES_PER_SECOND = 40 * 1024


# The placeholder behind #group-photo-view: its picture's mean colour, size and the box's shape before the photo came.
PLACEHOLDER_COLOUR = """(async () => {
  const img = document.getElementById('group-photo-view');
  const url = /url\\("(.*)"\\)/.exec(img.style.backgroundImage)[1];
  const picture = new Image();
  picture.src = url;
  await picture.decode();
  const canvas = document.createElement('canvas');
  canvas.width = picture.width;
  canvas.height = picture.height;
  const context = canvas.getContext('2d');
  context.drawImage(picture, 0, 0);
  const data = context.getImageData(0, 0, picture.width, picture.height).data;
  const sums = [0, 0, 0];
  for (let i = 0; i < data.length; i += 4) for (let c = 0; c < 3; c++) sums[c] += data[i + c];
  const box = img.getBoundingClientRect();
  return { mean: sums.map((s) => s / (data.length / 4)), size: [picture.width, picture.height], box: [box.width, box.height],
           dataURL: url.startsWith('data:image/png;base64,') };
})()"""


def patched_bytes(log_path, start):
    """Bytes the server received in PATCH bodies after byte `start` of its log, by upload id."""
    received = {}
    with open(log_path, "rb") as log:
        log.seek(start)
        for match in PATCH.finditer(log.read().decode("utf-8", "replace")):
            received[match.group(2)] = received.get(match.group(2), 0) + int(match.group(1))
    return received


def serve_blank(port):
    """An empty page on another origin (http://127.0.0.1:port), for the cross-origin checks."""
    class Blank(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = b"<!doctype html><title>another origin</title>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Blank)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# Runs in another origin's page: a whole tus upload of `bytes` to the server, as a web app would.
CROSS_ORIGIN_UPLOAD = """async ([base, token, bytes, key]) => {
  try {
    const auth = { "Tus-Resumable": "1.0.0", Authorization: `Bearer ${token}` };
    const created = await fetch(`${base}/files/`, { method: "POST", headers: { ...auth, "Upload-Length": String(bytes.length),
      "Upload-Metadata": `key ${btoa(key)}` } });
    const location = created.headers.get("Location");
    const patched = await fetch(location, { method: "PATCH", headers: { ...auth, "Upload-Offset": "0",
      "Content-Type": "application/offset+octet-stream" }, body: new Uint8Array(bytes) });
    return { created: created.status, location, patched: patched.status, offset: patched.headers.get("Upload-Offset") };
  } catch (error) {
    return { error: `${error.name}: ${error.message}` };
  }
}"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--server-log", required=True)
    parser.add_argument("--photo", required=True)
    parser.add_argument("--small", required=True)
    parser.add_argument("--large", required=True, help="a photo over 5 MiB (too large for a profile picture)")
    parser.add_argument("--allowed-port", type=int, required=True)
    parser.add_argument("--refused-port", type=int, required=True)
    parser.add_argument("--screenshot")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    size = os.path.getsize(args.photo)
    result = {"photoSize": size}
    work = tempfile.mkdtemp()
    text_file = os.path.join(work, "notes.jpg")
    with open(text_file, "w") as f:
        f.write("These are my notes, not a photo.\n" * 20)

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, headless=True, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1100, "height": 900})
        page = context.new_page()
        console_errors, page_errors = [], []
        page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: page_errors.append(str(e)))
        cdp = context.new_cdp_session(page)

        def throttle(on, rate=UPLOAD_BYTES_PER_SECOND):
            cdp.send("Network.enable")
            cdp.send("Network.emulateNetworkConditions", {
                "offline": False, "latency": 20 if on else 0, "downloadThroughput": -1,
                "uploadThroughput": rate if on else -1})

        def wait_until(expression, arg=None, timeout=15_000):
            """Polls `expression` in the page until it is truthy (Playwright's wait_for_function compiles its
            predicate with eval, which the page's Content-Security-Policy rightly refuses)."""
            for _ in range(timeout // 50):
                if page.evaluate(expression, arg):
                    return
                page.wait_for_timeout(50)
            raise TimeoutError(f"never true: {expression}")

        def watch_progress(container):
            """Records every value the progress bars in `container` take."""
            page.evaluate("""(id) => {
              window.progressSeen = window.progressSeen || {};
              const seen = window.progressSeen[id] = [];
              new MutationObserver((records) => { for (const r of records) if (r.target.tagName === "PROGRESS") seen.push(Number(r.target.value)); })
                .observe(document.getElementById(id), { subtree: true, attributes: true, attributeFilter: ["value"] });
            }""", container)

        def wait_acknowledged(container, at_least):
            wait_until("([id, n]) => [...document.querySelectorAll(`#${id} progress`)].some(p => Number(p.value) >= n)",
                       [container, at_least], timeout=60_000)

        def sign_in():
            page.fill("#token", args.token)
            page.click("#sign-in-form button[type=submit]")
            wait_until("document.getElementById('who').textContent.startsWith('Signed in as')", timeout=15_000)

        # Signing in; the token is kept for the tab only.
        page.goto(args.base + "/", wait_until="load")
        sign_in()
        result["who"] = page.text_content("#who")
        result["tokenInLocalStorage"] = page.evaluate("Object.values(localStorage).some(v => v.includes('.'))")
        result["tokenInSessionStorage"] = page.evaluate("sessionStorage.getItem('photoprep.token') !== null")
        result["csp"] = page.evaluate("fetch('/').then(r => r.headers.get('content-security-policy'))")

        # A group with two participants picked by name, and its photo on a throttled connection.
        throttle(True)
        page.fill("#group-name", "Beach day")
        for user, prefix in [("u2", "Be"), ("u3", "cl")]:
            page.fill("#participant-search", prefix)
            page.click(f"#participant-results button[data-user={user}]")
        result["participantsChosen"] = page.eval_on_selector_all("#participants li", "items => items.map(i => i.dataset.user)")
        page.set_input_files("#group-photo", args.photo)
        watch_progress("group-uploads")
        page.click("#create-form button[type=submit]")
        page.wait_for_selector("#group-uploads .upload.done", timeout=60_000)
        result["groupProgress"] = page.evaluate("window.progressSeen['group-uploads']")
        throttle(False)
        beach = page.locator("#group-list li", has_text="Beach day")
        wait_until("[...document.querySelectorAll('#group-list li img:not([hidden])')].some(i => i.complete && i.naturalWidth > 0)",
                               timeout=15_000)
        result["groupId"] = beach.get_attribute("data-group")
        result["groupListImage"] = beach.locator("img").evaluate("i => [i.naturalWidth, i.naturalHeight]")
        # The group's page with its photo held back: the placeholder is drawn in its place until the photo arrives.
        held = []
        page.route("**/media/group_photos/**", lambda route: held.append(route))
        beach.locator("button").click()
        wait_until("document.getElementById('group-photo-view').dataset.placeholder === 'shown' && "
                   "!document.getElementById('group-photo-view').complete", timeout=15_000)
        result["placeholderWhileLoading"] = page.evaluate(PLACEHOLDER_COLOUR)
        for route in held:
            route.continue_()
        page.unroute("**/media/group_photos/**")
        wait_until("(() => { const i = document.getElementById('group-photo-view'); return !i.hidden && i.complete && i.naturalWidth > 0; })()",
                               timeout=15_000)
        result["groupPageImage"] = page.eval_on_selector("#group-photo-view", "i => [i.naturalWidth, i.naturalHeight]")
        result["placeholderAfterLoad"] = page.eval_on_selector(
            "#group-photo-view", "i => [i.dataset.placeholder, i.style.backgroundImage]")

        # The admin clicks the photo a tenth of the way in from its left edge, half-way down: the avatar is centred there.
        box = page.eval_on_selector("#group-photo-view", "i => { const r = i.getBoundingClientRect(); return [r.width, r.height]; }")
        page.click("#group-photo-view", position={"x": box[0] * 0.1, "y": box[1] * 0.5})
        wait_until("document.getElementById('message').textContent.includes('centred there')")
        result["focusMessage"] = page.text_content("#message")
        result["groupTitle"] = page.text_content("#group-title")

        # Cancelled mid-upload: the upload is deleted on the server.
        throttle(True, INTERRUPTED_BYTES_PER_SECOND)
        page.set_input_files("#profile-file", args.photo)
        wait_acknowledged("profile-uploads", 1)
        upload_url = page.evaluate("JSON.parse(Object.entries(localStorage).find(([k]) => k.includes('profile_images/'))?.[1]).location")
        page.click("#profile-uploads .upload button:has-text('Cancel')")
        wait_until("document.querySelector('#profile-uploads .upload .status').textContent.startsWith('Cancelled')", timeout=15_000)
        throttle(False)
        result["cancelledUpload"] = upload_url
        result["cancelledHead"] = page.evaluate("""([url, token]) => fetch(url, { method: "HEAD", headers: { "Tus-Resumable": "1.0.0",
            Authorization: `Bearer ${token}` } }).then(r => r.status)""", [upload_url, args.token])
        result["cancelledForgotten"] = page.evaluate("!Object.keys(localStorage).some(k => k.includes('profile_images/'))")

        # Reloaded mid-upload: the same file picked again resumes; the server receives only the rest.
        log_start = os.path.getsize(args.server_log)
        throttle(True, INTERRUPTED_BYTES_PER_SECOND)
        page.set_input_files("#album-file", args.photo)
        wait_acknowledged("album-uploads", 256 * 1024)
        before = patched_bytes(args.server_log, log_start)
        page.reload(wait_until="load")
        wait_until("document.getElementById('who').textContent.startsWith('Signed in as')", timeout=15_000)
        throttle(True)
        log_resumed = os.path.getsize(args.server_log)
        page.set_input_files("#album-file", args.photo)
        page.wait_for_selector("#album-uploads .upload.done", timeout=60_000)
        throttle(False)
        result["reloadBefore"] = before
        result["reloadAfter"] = patched_bytes(args.server_log, log_resumed)
        result["reloadTotal"] = patched_bytes(args.server_log, log_start)
        wait_until("document.querySelectorAll('#album-photos li img:not([hidden])').length === 1", timeout=15_000)
        wait_until("document.querySelector('#album-photos li img').complete", timeout=15_000)
        result["albumImage"] = page.eval_on_selector("#album-photos li img", "i => [i.naturalWidth, i.naturalHeight]")
        if args.screenshot:
            page.screenshot(path=args.screenshot, full_page=True)

        # A text file named .jpg: the server's 415 and its reason, in words.
        page.set_input_files("#profile-file", text_file)
        page.wait_for_selector("#profile-uploads .upload.failed .status", timeout=15_000)
        result["textFileStatus"] = page.eval_on_selector_all("#profile-uploads .upload .status", "s => s.at(-1).textContent")

        # Too large for the path: refused before a byte is sent.
        log_start = os.path.getsize(args.server_log)
        page.set_input_files("#profile-file", args.large)
        wait_until("document.querySelectorAll('#profile-uploads .upload.failed').length === 2")
        result["tooLargeStatus"] = page.eval_on_selector_all("#profile-uploads .upload .status", "s => s.at(-1).textContent")
        result["tooLargeRequests"] = len(re.findall(r"\] (POST|PATCH) /files/", open(args.server_log, encoding="utf-8", errors="replace").read()[log_start:]))

        # The creation answered 429 with Retry-After: 3: the page asks again no sooner (its own backoff would in 1 s).
        creations = []
        page.on("request", lambda r: creations.append(time.monotonic()) if r.method == "POST" and r.url.endswith("/files/") else None)
        refused = []
        def refuse_once(route):
            if refused:
                return route.continue_()
            refused.append(True)
            route.fulfill(status=429, headers={"Retry-After": "3", "Tus-Resumable": "1.0.0", "Content-Type": "text/plain"}, body="too many writes")
        page.route("**/files/", refuse_once)
        page.set_input_files("#profile-file", args.small)
        wait_until("document.querySelectorAll('#profile-uploads .upload.done').length === 1", timeout=30_000)
        page.unroute("**/files/", refuse_once)
        result["retryAfterGap"] = creations[1] - creations[0] if len(creations) >= 2 else None

        # The connection lost mid-upload for two seconds: retried with backoff, finished, each byte sent once.
        log_start = os.path.getsize(args.server_log)
        throttle(True, INTERRUPTED_BYTES_PER_SECOND)
        page.set_input_files("#profile-file", args.photo)
        wait_acknowledged("profile-uploads", 256 * 1024)
        cdp.send("Network.emulateNetworkConditions", {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        page.wait_for_timeout(2000)
        throttle(True)
        wait_until("document.querySelectorAll('#profile-uploads .upload.done').length === 2", timeout=60_000)
        throttle(False)
        result["offlineReceived"] = patched_bytes(args.server_log, log_start)
        # The server answers an upload's last request once the photo is recorded, so it now names the new picture;
        # the page reloads the profile and its <img> must come to show it (until then it shows the previous one,
        # complete). Asked of the server, not taken from the first /v1/me the page sends: under load that can
        # still be the reload after the previous upload.
        current = page.evaluate("""([base, token]) => fetch(base + "/v1/me", { headers: { Authorization: `Bearer ${token}` } })
            .then(r => r.json())""", [args.base, args.token])
        picture = urlsplit(current["profilePhotoDownloadURL"]).path
        wait_until(
            "(path) => { const i = document.getElementById('profile-photo');"
            " return !i.hidden && new URL(i.src).pathname === path && i.complete && i.naturalWidth > 0; }", picture)
        result["profileImage"] = page.eval_on_selector("#profile-photo", "i => [i.naturalWidth, i.naturalHeight]")

        # Markup in a group name is text, and runs nothing.
        hostile = '<img src=x onerror="window.pwned=1">'
        page.fill("#group-name", hostile)
        for user, prefix in [("u2", "Be"), ("u3", "cl")]:
            page.fill("#participant-search", prefix)
            page.click(f"#participant-results button[data-user={user}]")
        page.click("#create-form button[type=submit]")
        wait_until("[...document.querySelectorAll('#group-list li button')].some(b => b.textContent.includes('onerror'))", timeout=15_000)
        page.wait_for_timeout(300)
        result["hostileShown"] = page.eval_on_selector_all("#group-list li button", "bs => bs.map(b => b.textContent)")
        result["hostileRan"] = page.evaluate("window.pwned !== undefined || document.querySelector('img[src=x]') !== null")

        # Accessible and at phone width: every control named, nothing wider than the screen.
        result["unlabelled"] = page.evaluate("""[...document.querySelectorAll('input, textarea, button')]
            .filter(e => !(e.labels?.length || e.getAttribute('aria-label') || (e.tagName === 'BUTTON' && e.textContent.trim())))
            .map(e => e.id || e.outerHTML.slice(0, 80))""")
        page.set_viewport_size({"width": 390, "height": 844})
        result["phoneOverflow"] = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        result["consoleErrors"] = console_errors
        result["pageErrors"] = page_errors

        # Other origins: one allowed by --cors-origin uploads; another is refused by the browser itself.
        with open(args.small, "rb") as f:
            small = list(f.read())
        for name, port in [("allowed", args.allowed_port), ("refused", args.refused_port)]:
            blank = serve_blank(port)
            other = context.new_page()
            other.goto(f"http://127.0.0.1:{port}/", wait_until="load")
            result[f"crossOrigin_{name}"] = other.evaluate(CROSS_ORIGIN_UPLOAD, [args.base, args.token, small, f"user_photos/u1/web/{name}.jpg"])
            other.close()
            blank.shutdown()
        browser.close()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
