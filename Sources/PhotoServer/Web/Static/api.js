// The services' API (/v1/) with the signed-in user's bearer token. A refusal becomes an ApiError carrying
// the server's own words: the problem details' `detail` (RFC 9457), or the status line.

export class ApiError extends Error {
  constructor(status, detail) {
    super(`${status}: ${detail}`);
    this.name = "ApiError";
    this.status = status;
  }
}

export class Api {
  /** base: the server's URL (the page's origin); token(): the bearer token. */
  constructor(base, token) {
    this.base = base;
    this.token = token;
  }

  async call(method, path, body) {
    const headers = { Accept: "application/json, application/problem+json", Authorization: `Bearer ${this.token()}` };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await fetch(new URL(path, this.base), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (error) {
      throw new ApiError(0, `the server cannot be reached (${error.message})`);
    }
    if (response.status === 204) return null;
    const text = await response.text();
    let json = null;
    try { json = text ? JSON.parse(text) : null; } catch { json = null; }
    if (!response.ok) throw new ApiError(response.status, json?.detail ?? (text.trim() || response.statusText));
    return json;
  }

  me() { return this.call("GET", "/v1/me"); }
  profilePhoto() { return this.call("GET", "/v1/me/photo"); }
  deleteProfilePhoto() { return this.call("DELETE", "/v1/me/photo"); }
  findUsers(prefix) { return this.call("GET", `/v1/users?prefix=${encodeURIComponent(prefix)}&limit=10`); }
  groups() { return this.call("GET", "/v1/groups?limit=50"); }
  group(id) { return this.call("GET", `/v1/groups/${encodeURIComponent(id)}`); }
  createGroup(id, name, participants) { return this.call("POST", "/v1/groups", { id, name, participants }); }
  album(album) { return this.call("GET", `/v1/albums/${encodeURIComponent(album)}/photos`); }
  setGroupPhotoFocus(id, focus) { return this.call("PUT", `/v1/groups/${encodeURIComponent(id)}/photo/focus`, { focus }); }
  deleteAlbumPhoto(album, id) { return this.call("DELETE", `/v1/albums/${encodeURIComponent(album)}/photos/${encodeURIComponent(id)}`); }
}

/** The `sub` of a JWT (read, not verified: the server verifies it), or null. */
export function subject(token) {
  try {
    const payload = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(payload.padEnd(Math.ceil(payload.length / 4) * 4, "="))).sub ?? null;
  } catch {
    return null;
  }
}
