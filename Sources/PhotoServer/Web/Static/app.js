// The page: sign in with a bearer token, then the services — my profile and its picture, my groups and
// their photos, a new group, a group's page, my album. Every text from people (names, group names) is
// set with textContent, never parsed as HTML; every refusal is shown in the server's words.

import { Api, ApiError, subject } from "./api.js";
import { upload } from "./tus.js";
import { placeholderPicture } from "./placeholder.js";

const $ = (id) => document.getElementById(id);
const TOKEN = "photoprep.token"; // sessionStorage: gone with the tab, never in localStorage or a URL
const MiB = 1024 * 1024;
const LIMITS = { profile: 5 * MiB, group: 5 * MiB, album: 10 * MiB };

let token = sessionStorage.getItem(TOKEN);
let me = null;
const api = new Api(location.origin, () => token);
const endpoint = new URL("/files/", location.origin).href;

function el(tag, { text, className, attrs = {} } = {}, ...children) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

function say(text, ok = false) {
  $("message").textContent = text;
  $("message").className = ok ? "ok" : "";
}

function describe(error) {
  if (error instanceof ApiError && error.status === 401) return `Not signed in: ${error.message}`;
  return error.message ?? String(error);
}

/** Runs an action, showing what went wrong instead of failing silently. */
async function attempt(action) {
  try {
    return await action();
  } catch (error) {
    say(describe(error));
    return undefined;
  }
}

/** The smallest thumbnail at least `edge` px (else the photo itself), for an <img>. */
function pictureURL(photo, edge) {
  const thumbnails = photo?.thumbnails ?? photo?.profilePhotoThumbnails ?? [];
  const fit = thumbnails.find((t) => t.edge >= edge);
  return fit?.downloadURL ?? photo?.downloadURL ?? photo?.profilePhotoDownloadURL ?? null;
}

/**
 * Shows `url` in `img`, with the photo's placeholder (a ThumbHash) drawn behind it, in the photo's shape, until the
 * photo has loaded.
 */
function show(img, url, placeholder) {
  img.hidden = !url;
  const drawn = url && placeholder ? placeholderPicture(placeholder) : null;
  img.style.backgroundImage = drawn ? `url("${drawn.url}")` : "";
  img.style.aspectRatio = drawn ? `auto ${drawn.ratio}` : "";
  img.dataset.placeholder = drawn ? "shown" : "";
  if (drawn) img.addEventListener("load", () => { img.style.backgroundImage = ""; img.dataset.placeholder = "replaced"; }, { once: true });
  if (url) img.src = url;
  else img.removeAttribute("src");
}

/**
 * One upload with its progress bar, its status in words, Cancel (the upload deleted on the server) and
 * Retry (resumes where the server stopped). Resolves true once the server has the photo.
 */
function tracked(container, file, place, limit, key = () => `${place}${crypto.randomUUID()}.jpg`) {
  const bar = el("progress", { attrs: { max: String(file.size || 1), value: "0", "aria-label": `Upload of ${file.name}` } });
  const status = el("span", { className: "status", attrs: { role: "status" } });
  const cancel = el("button", { text: "Cancel", className: "secondary", attrs: { type: "button" } });
  const retry = el("button", { text: "Retry", attrs: { type: "button" }, className: "secondary" });
  retry.hidden = true;
  const box = el("div", { className: "upload", attrs: { "data-place": place } }, el("span", { text: file.name }), bar, cancel, retry, status);
  container.append(box);
  return new Promise((resolve) => {
    const run = async () => {
      const controller = new AbortController();
      cancel.onclick = () => controller.abort(new DOMException("cancelled", "AbortError"));
      cancel.hidden = false;
      retry.hidden = true;
      box.className = "upload";
      status.textContent = "Uploading…";
      try {
        await upload(file, {
          endpoint, place, key, token: () => token, limit, signal: controller.signal,
          onProgress: ({ acknowledged, total }) => {
            bar.value = acknowledged;
            status.textContent = `${Math.round((100 * acknowledged) / total)} % — ${acknowledged} of ${total} bytes stored`;
          },
        });
        box.className = "upload done";
        status.textContent = "Done: the server has the photo.";
        cancel.hidden = true;
        resolve(true);
      } catch (error) {
        cancel.hidden = true;
        box.className = "upload failed";
        if (controller.signal.aborted) {
          status.textContent = "Cancelled: the upload was deleted.";
          resolve(false);
          return;
        }
        status.textContent = `Refused — ${error.message}`;
        retry.hidden = false;
        retry.onclick = run;
      }
    };
    run();
  });
}

// MARK: - Profile

async function loadProfile() {
  const user = await attempt(() => api.me().catch((error) => {
    if (error instanceof ApiError && error.status === 404) return { id: me, displayName: me };
    throw error;
  }));
  if (!user) return;
  $("who").textContent = `Signed in as ${user.displayName} (${user.id})`;
  $("profile-name").textContent = user.displayName;
  show($("profile-photo"), pictureURL(user, 128), user?.profilePhotoPlaceholder);
}

async function setProfilePhoto(file) {
  if (await tracked($("profile-uploads"), file, `profile_images/${me}/`, LIMITS.profile)) await loadProfile();
}

// MARK: - Groups

async function loadGroups() {
  const page = await attempt(() => api.groups());
  if (!page) return;
  $("group-list").replaceChildren(...page.groups.map((group) => {
    const img = el("img", { attrs: { alt: "" } });
    show(img, pictureURL(group.photo, 96), group.photo?.placeholder);
    const open = el("button", { text: group.name, className: "secondary", attrs: { type: "button" } });
    open.onclick = () => openGroup(group.id);
    return el("li", { attrs: { "data-group": group.id } }, img, open, el("span", { text: `${group.members.length} members` }));
  }));
}

async function openGroup(id) {
  const group = await attempt(() => api.group(id));
  if (!group) return;
  $("group-page").hidden = false;
  $("group-page").dataset.group = id;
  $("group-title").textContent = group.name;
  show($("group-photo-view"), group.photo?.downloadURL ?? null, group.photo?.placeholder);
  $("group-members").replaceChildren(...group.members.map((m) => el("li", { text: m.isAdmin ? `${m.userId} (admin)` : m.userId })));
  $("group-admin").hidden = !group.members.some((m) => m.userId === me && m.isAdmin);
}

// An admin clicks the group's photo where its avatar should be centred: the server cuts the squares again there.
$("group-photo-view").addEventListener("click", async (event) => {
  const id = $("group-page").dataset.group;
  if ($("group-admin").hidden || !id) return;
  const box = event.currentTarget.getBoundingClientRect();
  const clamp = (v) => Math.min(1, Math.max(-1, v));
  const x = clamp(((event.clientX - box.left) / box.width) * 2 - 1), y = clamp(1 - ((event.clientY - box.top) / box.height) * 2);
  const photo = await attempt(() => api.setGroupPhotoFocus(id, `${x.toFixed(2)},${y.toFixed(2)}`));
  if (!photo) return;
  say("The group's avatar is centred there.", true);
  await loadGroups();
});

async function setGroupPhoto(id, file, container) {
  if (await tracked(container, file, `group_photos/${id}/`, LIMITS.group, () => `group_photos/${id}/photo.jpg`)) {
    await loadGroups();
    if ($("group-page").dataset.group === id && !$("group-page").hidden) await openGroup(id);
  }
}

const chosen = new Map(); // user id → display name

function renderParticipants() {
  $("participants").replaceChildren(...[...chosen].map(([id, name]) => {
    const remove = el("button", { text: `Remove ${name}`, attrs: { type: "button" } });
    remove.onclick = () => { chosen.delete(id); renderParticipants(); };
    return el("li", { attrs: { "data-user": id } }, el("span", { text: `${name} (${id}) ` }), remove);
  }));
}

let searching = 0;
async function search(prefix) {
  const mine = ++searching;
  if (!prefix.trim()) return $("participant-results").replaceChildren();
  const page = await attempt(() => api.findUsers(prefix.trim()));
  if (!page || mine !== searching) return;
  $("participant-results").replaceChildren(...page.users.filter((u) => !chosen.has(u.id)).map((user) => {
    const add = el("button", { text: `Add ${user.displayName} (${user.id})`, attrs: { type: "button", "data-user": user.id } });
    add.onclick = () => { chosen.set(user.id, user.displayName); renderParticipants(); search($("participant-search").value); };
    return el("li", {}, add);
  }));
}

async function createGroup(event) {
  event.preventDefault();
  const id = crypto.randomUUID();
  const name = $("group-name").value;
  const photo = $("group-photo").files[0];
  const group = await attempt(() => api.createGroup(id, name, [...chosen.keys()]));
  if (!group) return;
  say(`Group “${group.name}” created.`, true);
  $("create-form").reset();
  chosen.clear();
  renderParticipants();
  $("participant-results").replaceChildren();
  await loadGroups();
  // The group exists whatever happens to its photo; a failed photo offers Retry.
  if (photo) await setGroupPhoto(id, photo, $("group-uploads"));
}

// MARK: - Album

const albumName = () => $("album-name").value.trim();

async function loadAlbum() {
  const album = albumName();
  const page = await attempt(() => api.album(album));
  if (!page) return;
  $("album-photos").replaceChildren(...page.photos.map((photo) => {
    const img = el("img", { attrs: { alt: `Album photo ${photo.id}` } });
    show(img, pictureURL(photo, 256), photo.placeholder);
    const remove = el("button", { text: "Delete", className: "secondary", attrs: { type: "button", "aria-label": `Delete photo ${photo.id}` } });
    remove.onclick = async () => { await attempt(() => api.deleteAlbumPhoto(album, photo.id)); await loadAlbum(); };
    return el("li", { attrs: { "data-photo": photo.id } }, img, el("span", { text: photo.state }), remove);
  }));
}

async function addToAlbum(files) {
  const album = albumName();
  await Promise.all([...files].map((file) =>
    tracked($("album-uploads"), file, `user_photos/${me}/${album}/`, LIMITS.album)));
  await loadAlbum();
}

// MARK: - Signing in

async function enter() {
  me = subject(token);
  if (!me) {
    say("That is not a JWT with a subject.");
    return signOut();
  }
  $("sign-in").hidden = true;
  $("signed-in").hidden = false;
  $("sign-out").hidden = false;
  await loadProfile();
  await Promise.all([loadGroups(), loadAlbum()]);
}

function signOut() {
  token = null;
  me = null;
  sessionStorage.removeItem(TOKEN);
  $("sign-in").hidden = false;
  $("signed-in").hidden = true;
  $("sign-out").hidden = true;
  $("who").textContent = "";
}

$("sign-in-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  token = $("token").value.trim();
  $("token").value = "";
  sessionStorage.setItem(TOKEN, token);
  say("");
  await enter();
});
$("sign-out").addEventListener("click", signOut);
$("profile-file").addEventListener("change", (event) => {
  const file = event.target.files[0];
  event.target.value = "";
  if (file) setProfilePhoto(file);
});
$("profile-delete").addEventListener("click", async () => {
  if ((await attempt(() => api.deleteProfilePhoto())) !== undefined) { say("Profile picture deleted.", true); await loadProfile(); }
});
$("participant-search").addEventListener("input", (event) => search(event.target.value));
$("create-form").addEventListener("submit", createGroup);
$("group-close").addEventListener("click", () => { $("group-page").hidden = true; });
$("group-photo-replace").addEventListener("change", (event) => {
  const file = event.target.files[0];
  event.target.value = "";
  if (file) setGroupPhoto($("group-page").dataset.group, file, $("group-page-uploads"));
});
$("album-file").addEventListener("change", (event) => {
  const files = [...event.target.files];
  event.target.value = "";
  if (files.length) addToAlbum(files);
});
$("album-name").addEventListener("change", loadAlbum);

if (token) enter();
