// A resumable upload in the browser, over tus 1.0 (core, creation, termination) as `photoprep serve`
// speaks it at /files/. Modelled on tus-js-client's behaviour: the upload's URL is remembered per file
// fingerprint (where it goes, and the file's name, size and last modification) so that after a reload the
// same file picked again resumes (HEAD for the offset, then only the rest) — under the storage key it was
// first given; retries with backoff on network errors, 5xx, 423 and 429 (never sooner than a Retry-After
// says); cancel deletes the upload on the
// server. Progress is what the server acknowledged (each chunk's Upload-Offset).

const TUS = { "Tus-Resumable": "1.0.0" };
const RETRY_DELAYS = [0, 1000, 3000, 5000];
const STORE_PREFIX = "photoprep.upload:";

/** Why an upload stopped: the server's words (its status and plain-text reason), or the network's. */
export class UploadError extends Error {
  constructor(message, status = 0) {
    super(message);
    this.name = "UploadError";
    this.status = status;
  }
}

function encodeMetadata(pairs) {
  return Object.entries(pairs)
    .map(([name, value]) => `${name} ${btoa(String.fromCharCode(...new TextEncoder().encode(value)))}`)
    .join(",");
}

const sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { clearTimeout(timer); reject(signal.reason); }, { once: true });
  });

/** One request through XMLHttpRequest (the only browser API with upload progress). */
function request(method, url, { headers = {}, body = null, signal, onSent } = {}) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
    if (onSent) xhr.upload.onprogress = (event) => onSent(event.loaded);
    xhr.onload = () => resolve(xhr);
    xhr.onerror = () => reject(new UploadError(`${method} ${url}: the network failed`));
    xhr.onabort = () => reject(signal?.reason ?? new DOMException("cancelled", "AbortError"));
    if (signal) {
      if (signal.aborted) return reject(signal.reason);
      signal.addEventListener("abort", () => xhr.abort(), { once: true });
    }
    xhr.send(body);
  });
}

/** How long the server asked to be left alone (`Retry-After`: seconds, or an HTTP date), in ms; 0 when it
 *  did not say. At most an hour. */
function retryAfter(xhr) {
  const value = xhr.getResponseHeader("Retry-After");
  if (!value) return 0;
  const seconds = Number(value);
  if (value.trim() !== "" && Number.isInteger(seconds) && seconds >= 0) return Math.min(seconds, 3600) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? 0 : Math.min(Math.max(0, date - Date.now()), 3600 * 1000);
}

function refusal(xhr, what) {
  const reason = (xhr.responseText || "").trim() || xhr.statusText;
  const error = new UploadError(`${what}: ${xhr.status} ${reason}`, xhr.status);
  error.retryAfter = retryAfter(xhr);
  return error;
}

const retriable = (status) => status === 0 || status === 423 || status === 429 || status >= 500;

/** Deletes an upload (tus termination), trying again while it is busy (423: its last PATCH is still
 *  being read by the server) or the server is unavailable. */
async function terminate(location, headers) {
  for (const delay of [0, 250, 500, 1000, 2000, 4000]) {
    await new Promise((resolve) => setTimeout(resolve, delay));
    const answer = await request("DELETE", location, { headers }).catch(() => null);
    if (answer && !retriable(answer.status)) return answer.status;
  }
  return 0;
}

/**
 * Uploads `file` to `endpoint` (…/files/) under a storage key: `key(file)` makes a new one; an upload of
 * the same file to the same `place` (a key prefix, e.g. `user_photos/u1/trip/`) left unfinished — by a
 * reload, a lost connection — is resumed under the key it began with.
 * options: token() → the bearer token; chunkSize; limit (bytes the path allows, checked before sending);
 * onProgress({ acknowledged, sent, total }); signal (AbortSignal: cancels and deletes the upload).
 * Resolves with the storage key when the server has the whole file (it then holds the normalised photo).
 */
export async function upload(file, { endpoint, place, key, token, chunkSize = 256 * 1024, limit, onProgress = () => {}, signal }) {
  if (limit !== undefined && file.size >= limit) {
    throw new UploadError(`${file.name}: ${file.size} bytes; photos here must be smaller than ${limit} bytes`, 413);
  }
  if (file.size === 0) throw new UploadError(`${file.name}: the file is empty`, 415);
  const auth = () => ({ ...TUS, Authorization: `Bearer ${token()}` });
  const fingerprint = `${STORE_PREFIX}${place}:${file.name}:${file.size}:${file.lastModified}`;
  const controller = new AbortController();
  const stop = () => controller.abort(new DOMException("cancelled", "AbortError"));
  signal?.addEventListener("abort", stop, { once: true });
  const remembered = JSON.parse(localStorage.getItem(fingerprint) ?? "null");
  let location = remembered?.location ?? null;
  const storageKey = remembered?.key ?? key(file);
  let offset = 0;
  const report = (sent) => onProgress({ acknowledged: offset, sent: Math.min(file.size, offset + sent), total: file.size });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        if (location) {
          // Resume: the server says how much it has.
          const head = await request("HEAD", location, { headers: auth(), signal: controller.signal });
          if (head.status === 200) {
            offset = Number(head.getResponseHeader("Upload-Offset"));
          } else if ([403, 404, 410].includes(head.status)) {
            localStorage.removeItem(fingerprint);
            location = null;
            offset = 0;
          } else {
            throw refusal(head, "resuming the upload");
          }
        }
        if (!location) {
          const created = await request("POST", endpoint, {
            headers: { ...auth(), "Upload-Length": String(file.size), "Upload-Metadata": encodeMetadata({ key: storageKey, filename: file.name }) },
            signal: controller.signal,
          });
          if (created.status !== 201) throw refusal(created, "creating the upload");
          location = new URL(created.getResponseHeader("Location"), endpoint).href;
          localStorage.setItem(fingerprint, JSON.stringify({ location, key: storageKey }));
          offset = 0;
        }
        report(0);
        while (offset < file.size) {
          const chunk = file.slice(offset, Math.min(file.size, offset + chunkSize));
          const patched = await request("PATCH", location, {
            headers: { ...auth(), "Upload-Offset": String(offset), "Content-Type": "application/offset+octet-stream" },
            body: chunk,
            signal: controller.signal,
            onSent: report,
          });
          if (patched.status !== 204) throw refusal(patched, "sending the photo");
          offset = Number(patched.getResponseHeader("Upload-Offset"));
          attempt = 0;
          report(0);
        }
        localStorage.removeItem(fingerprint);
        return storageKey;
      } catch (error) {
        if (controller.signal.aborted) throw error;
        const status = error instanceof UploadError ? error.status : 0;
        if (!retriable(status) || attempt >= RETRY_DELAYS.length - 1) {
          if (!retriable(status)) localStorage.removeItem(fingerprint);
          throw error;
        }
        // Never sooner than the server said (a 429's or 503's Retry-After).
        await sleep(Math.max(RETRY_DELAYS[attempt + 1], error.retryAfter ?? 0), controller.signal);
      }
    }
  } catch (error) {
    if (controller.signal.aborted && location) {
      // Cancelled: the upload is deleted on the server (tus termination), and forgotten here.
      localStorage.removeItem(fingerprint);
      await terminate(location, auth());
    }
    throw error;
  } finally {
    signal?.removeEventListener("abort", stop);
  }
}
