// A photo's placeholder (the API's `placeholder`: a ThumbHash in base64) drawn as a small picture, shown behind an
// <img> until the photo itself has loaded. The format as `ThumbHash.swift` describes it; opaque and alpha hashes alike.

/**
 * The picture a ThumbHash describes, as a PNG data URL (32 px on its long side) with its aspect ratio (width / height,
 * as the hash records it); null for anything that is not one.
 */
export function placeholderPicture(base64) {
  let hash;
  try {
    hash = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
  const drawn = draw(hash);
  if (!drawn) return null;
  const canvas = document.createElement("canvas");
  canvas.width = drawn.width;
  canvas.height = drawn.height;
  const context = canvas.getContext("2d");
  context.putImageData(new ImageData(drawn.rgba, drawn.width, drawn.height), 0, 0);
  return { url: canvas.toDataURL("image/png"), ratio: drawn.ratio };
}

/** RGBA pixels from a ThumbHash's header and its DCT terms (4 bits each). */
function draw(hash) {
  if (hash.length < 5) return null;
  const header24 = hash[0] | (hash[1] << 8) | (hash[2] << 16), header16 = hash[3] | (hash[4] << 8);
  const hasAlpha = (header24 >> 23) !== 0, landscape = (header16 >> 15) !== 0;
  const long = hasAlpha ? 5 : 7, short = header16 & 7;
  const [lxWritten, lyWritten] = landscape ? [long, short] : [short, long];
  if (lxWritten === 0 || lyWritten === 0 || (hasAlpha && hash.length < 6)) return null;
  const lx = Math.max(3, lxWritten), ly = Math.max(3, lyWritten);
  let nibble = (hasAlpha ? 6 : 5) * 2;
  const terms = (nx, ny, scale) => {
    const values = [];
    for (let cy = 0; cy < ny; cy++) {
      for (let cx = cy > 0 ? 0 : 1; cx * ny < nx * (ny - cy); cx++, nibble++) {
        if (nibble >> 1 >= hash.length) throw new Error("short");
        values.push((((hash[nibble >> 1] >> ((nibble & 1) << 2)) & 15) / 7.5 - 1) * scale);
      }
    }
    return values;
  };
  const dc = { l: (header24 & 63) / 63, p: ((header24 >> 6) & 63) / 31.5 - 1, q: ((header24 >> 12) & 63) / 31.5 - 1, a: hasAlpha ? (hash[5] & 15) / 15 : 1 };
  let ac;
  try {
    ac = {
      l: terms(lx, ly, ((header24 >> 18) & 31) / 31),
      p: terms(3, 3, (((header16 >> 3) & 63) / 63) * 1.25),
      q: terms(3, 3, (((header16 >> 9) & 63) / 63) * 1.25),
      a: hasAlpha ? terms(5, 5, (hash[5] >> 4) / 15) : [],
    };
  } catch {
    return null;
  }
  const ratio = lxWritten / lyWritten;
  const width = ratio > 1 ? 32 : Math.round(32 * ratio), height = ratio > 1 ? Math.round(32 / ratio) : 32;
  const rgba = new Uint8ClampedArray(width * height * 4);
  const fx = [], fy = [];
  const sum = (values, nx, ny) => {
    let total = 0;
    for (let cy = 0, j = 0; cy < ny; cy++) {
      for (let cx = cy > 0 ? 0 : 1; cx * ny < nx * (ny - cy); cx++, j++) total += values[j] * fx[cx] * fy[cy] * 2;
    }
    return total;
  };
  for (let y = 0, i = 0; y < height; y++) {
    for (let c = 0; c < Math.max(ly, 5); c++) fy[c] = Math.cos((Math.PI / height) * (y + 0.5) * c);
    for (let x = 0; x < width; x++, i += 4) {
      for (let c = 0; c < Math.max(lx, 5); c++) fx[c] = Math.cos((Math.PI / width) * (x + 0.5) * c);
      const l = dc.l + sum(ac.l, lx, ly), p = dc.p + sum(ac.p, 3, 3), q = dc.q + sum(ac.q, 3, 3);
      const a = dc.a + (hasAlpha ? sum(ac.a, 5, 5) : 0);
      const b = l - (2 / 3) * p, r = (3 * l - b + q) / 2, g = r - q;
      rgba.set([r, g, b, a].map((v) => Math.round(255 * Math.min(1, Math.max(0, v)))), i);
    }
  }
  return { width, height, rgba, ratio };
}
