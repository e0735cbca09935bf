#!/usr/bin/env python3
"""Builds the HEIF fixtures that heif-enc 1.15 cannot write, from single images it did write.

Standard library only (ctypes for Little CMS in `icc`). Used by make-format-fixtures.sh:

  heif_boxes.py grid OUT.heic WIDTH HEIGHT COLS ROWS TILES.heic
      every coded image of TILES.heic (row-major) becomes a hidden tile of a 'grid' primary item
      whose output size is WIDTH x HEIGHT (the grid canvas is cropped to it)
  heif_boxes.py irot IN.heic OUT.heic ANGLE
      IN.heic with an 'irot' property (ANGLE x 90 degrees anti-clockwise) added to its primary item
  heif_boxes.py depth OUT.heic PRIMARY.heic DEPTH.heic
      the primary image of PRIMARY.heic plus the image of DEPTH.heic as its depth map
      (auxC urn:mpeg:hevc:2015:auxid:2, iref auxl depth -> primary); the depth item gets
      item ID 1, the primary ID 2, so the depth item is listed first
  heif_boxes.py icc DIR
      writes DIR/display-p3.icc and DIR/srgb.icc made by Little CMS (liblcms2.so.2)
  heif_boxes.py loop IN.heic OUT.heic KIND
      a hostile file: the coded image of IN.heic (item 1, hidden) under derived items that make a loop or a deep
      chain — KIND "grid" (a 1x1 grid that is its own tile), "iden" (an 'iden' item of itself), "cycle" (two 1x1
      grids, each the other's tile), "alpha" (the image its own alpha, by 'auxl'), or "chainN" (N 'iden' items, each
      of the next, the last of the image: a legal file N levels deep)
  heif_boxes.py overlapping IN.heic OUT.heic N REGION EXTENTS
      a hostile file: the primary image of IN.heic plus N Exif items describing it, each made of EXTENTS
      extents over the same REGION bytes (zeros after a TIFF header), so that the items claim
      N x EXTENTS x REGION bytes of a file that holds REGION once (a review found libheif 1.15 reads them all)

The input files are parsed (ftyp, meta: pitm, iloc, iinf, iref, iprp) and written back as
ftyp + meta (hdlr, pitm, iloc, iinf, iref, iprp(ipco + ipma), idat) + mdat.
"""

import struct
import sys

# --- reading ---------------------------------------------------------------------------------


def boxes(data, start=0, end=None):
    """Yields (type, payload start, payload end, box start) for the boxes in data[start:end]."""
    end = len(data) if end is None else end
    i = start
    while i + 8 <= end:
        size, kind = struct.unpack(">I4s", data[i:i + 8])
        header = 8
        if size == 1:
            size = struct.unpack(">Q", data[i + 8:i + 16])[0]
            header = 16
        elif size == 0:
            size = end - i
        if size < header or i + size > end:
            raise ValueError(f"bad box {kind!r} at {i}")
        yield kind.decode("latin-1"), i + header, i + size, i
        i += size


def uint(data, pos, size):
    return int.from_bytes(data[pos:pos + size], "big") if size else 0


def parse(path):
    """Returns dict(brands=ftyp payload, primary=item ID, items={id: item}, refs=[(type, from, [to])]).

    An item is dict(type=str, hidden=bool, data=bytes, props=[(property box bytes, essential)])."""
    data = open(path, "rb").read()
    top = {kind: (a, b) for kind, a, b, _ in boxes(data)}
    ftyp = data[top["ftyp"][0]:top["ftyp"][1]]
    m0, m1 = top["meta"]
    meta = {kind: (a, b) for kind, a, b, _ in boxes(data, m0 + 4, m1)}  # meta is a FullBox
    items, refs = {}, []
    primary = None

    a, b = meta["pitm"]
    primary = struct.unpack(">H", data[a + 4:a + 6])[0] if data[a] == 0 else struct.unpack(">I", data[a + 4:a + 8])[0]

    a, b = meta["iinf"]
    version = data[a]
    first = a + 4 + (2 if version == 0 else 4)
    for kind, p, q, _ in boxes(data, first, b):
        assert kind == "infe" and data[p] >= 2, "only infe version 2/3"
        v, flags = data[p], uint(data, p + 1, 3)
        pos = p + 4
        item_id = uint(data, pos, 2 if v == 2 else 4)
        pos += 2 if v == 2 else 4
        pos += 2  # item_protection_index
        items[item_id] = dict(type=data[pos:pos + 4].decode("latin-1"), hidden=bool(flags & 1), data=b"", props=[])

    idat = data[meta["idat"][0]:meta["idat"][1]] if "idat" in meta else b""
    a, b = meta["iloc"]
    version = data[a]
    pos = a + 4
    offset_size, length_size = data[pos] >> 4, data[pos] & 15
    base_offset_size, index_size = data[pos + 1] >> 4, (data[pos + 1] & 15 if version in (1, 2) else 0)
    pos += 2
    count = uint(data, pos, 2 if version < 2 else 4)
    pos += 2 if version < 2 else 4
    for _ in range(count):
        item_id = uint(data, pos, 2 if version < 2 else 4)
        pos += 2 if version < 2 else 4
        method = 0
        if version in (1, 2):
            method = uint(data, pos, 2) & 15
            pos += 2
        pos += 2  # data_reference_index
        base = uint(data, pos, base_offset_size)
        pos += base_offset_size
        extents = uint(data, pos, 2)
        pos += 2
        chunks = []
        for _ in range(extents):
            pos += index_size
            off = uint(data, pos, offset_size)
            pos += offset_size
            length = uint(data, pos, length_size)
            pos += length_size
            source = data if method == 0 else idat
            assert method in (0, 1), "only file and idat construction"
            chunks.append(source[base + off:base + off + length] if length else source[base + off:])
        items[item_id]["data"] = b"".join(chunks)

    if "iref" in meta:
        a, b = meta["iref"]
        wide = data[a] == 1
        for kind, p, q, _ in boxes(data, a + 4, b):
            n = 4 if wide else 2
            src = uint(data, p, n)
            cnt = uint(data, p + n, 2)
            refs.append((kind, src, [uint(data, p + n + 2 + k * n, n) for k in range(cnt)]))

    a, b = meta["iprp"]
    iprp = {kind: (p, q) for kind, p, q, _ in boxes(data, a, b)}
    ipco = [data[s:q] for _, _, q, s in boxes(data, *iprp["ipco"])]
    p, q = iprp["ipma"]
    version, flags = data[p], uint(data, p + 1, 3)
    pos = p + 4
    entries = uint(data, pos, 4)
    pos += 4
    for _ in range(entries):
        item_id = uint(data, pos, 2 if version < 1 else 4)
        pos += 2 if version < 1 else 4
        n = data[pos]
        pos += 1
        for _ in range(n):
            if flags & 1:
                v = uint(data, pos, 2)
                pos += 2
                essential, index = v >> 15, v & 0x7FFF
            else:
                essential, index = data[pos] >> 7, data[pos] & 0x7F
                pos += 1
            items[item_id]["props"].append((ipco[index - 1], bool(essential)))
    return dict(brands=ftyp, primary=primary, items=items, refs=refs)


def prop_type(box):
    return box[4:8].decode("latin-1")


# --- writing ---------------------------------------------------------------------------------


def box(kind, payload):
    return struct.pack(">I4s", 8 + len(payload), kind.encode("latin-1")) + payload


def fullbox(kind, version, flags, payload):
    return box(kind, struct.pack(">I", (version << 24) | flags) + payload)


def write(path, brands, primary, items, refs):
    """items: list of (id, dict as parse() returns plus optional in_idat=True); refs like parse()."""
    # Properties: shared when their bytes are equal, in first-use order.
    ipco, index = [], {}
    for _, item in items:
        for prop, _ in item["props"]:
            if prop not in index:
                ipco.append(prop)
                index[prop] = len(ipco)
    assert len(ipco) < 128
    ipma = struct.pack(">I", len(items))
    for item_id, item in items:
        ipma += struct.pack(">HB", item_id, len(item["props"]))
        ipma += bytes((0x80 if essential else 0) | index[prop] for prop, essential in item["props"])
    iprp = box("iprp", box("ipco", b"".join(ipco)) + fullbox("ipma", 0, 0, ipma))

    iinf = fullbox("iinf", 0, 0, struct.pack(">H", len(items)) + b"".join(
        fullbox("infe", 2, 1 if item["hidden"] else 0, struct.pack(">HH4s", item_id, 0, item["type"].encode()) + b"\0")
        for item_id, item in items))
    iref = fullbox("iref", 0, 0, b"".join(
        box(kind, struct.pack(">HH", src, len(dst)) + b"".join(struct.pack(">H", d) for d in dst))
        for kind, src, dst in refs)) if refs else b""
    hdlr = fullbox("hdlr", 0, 0, struct.pack(">I4s12x", 0, b"pict") + b"\0")
    pitm = fullbox("pitm", 0, 0, struct.pack(">H", primary))

    idat_items = [(i, it) for i, it in items if it.get("in_idat")]
    mdat_items = [(i, it) for i, it in items if not it.get("in_idat")]
    idat = b"".join(it["data"] for _, it in idat_items)
    version = 1 if idat_items else 0  # construction_method needs iloc version 1

    def iloc(mdat_start):
        out = struct.pack(">BBH", 0x44, 0x00, len(items))  # offset 4, length 4, base offset 0
        off = {"idat": 0, "mdat": mdat_start}
        for item_id, item in items:
            where = "idat" if item.get("in_idat") else "mdat"
            out += struct.pack(">H", item_id)
            if version:
                out += struct.pack(">H", 1 if where == "idat" else 0)
            out += struct.pack(">HHII", 0, 1, off[where], len(item["data"]))
            off[where] += len(item["data"])
        return fullbox("iloc", version, 0, out)

    # heif-enc 1.15 repeats the compatible brands once per image it writes: keep each brand once.
    compatible = []
    for k in range(8, len(brands), 4):
        if brands[k:k + 4] not in compatible:
            compatible.append(brands[k:k + 4])
    ftyp = box("ftyp", brands[:8] + b"".join(compatible))

    def meta(mdat_start):
        return fullbox("meta", 0, 0, hdlr + pitm + iloc(mdat_start) + iinf + iref + iprp
                       + (box("idat", idat) if idat_items else b""))

    mdat_start = len(ftyp) + len(meta(0)) + 8  # iloc has fixed-size fields: its length does not change
    mdat = box("mdat", b"".join(it["data"] for _, it in mdat_items))
    with open(path, "wb") as f:
        f.write(ftyp + meta(mdat_start) + mdat)


# --- the fixtures ----------------------------------------------------------------------------


def coded_images(heif):
    """The hvc1 items of a parsed file, in item-ID order."""
    return [heif["items"][i] for i in sorted(heif["items"]) if heif["items"][i]["type"] == "hvc1"]


def make_grid(out, width, height, cols, rows, tiles_path):
    src = parse(tiles_path)
    tiles = coded_images(src)
    assert len(tiles) == cols * rows, f"{len(tiles)} tiles for {cols}x{rows}"
    items = []
    # Tiles first (IDs 1..n, hidden, as an iPhone writes them), then the grid (the primary).
    for n, tile in enumerate(tiles, 1):
        items.append((n, dict(tile, hidden=True)))
    grid_id = len(tiles) + 1
    # ImageGrid: version 0, flags 0 (16-bit output size; 1 and 32-bit for a larger one), rows-1, columns-1, output
    # width, height.
    if width > 0xFFFF or height > 0xFFFF:
        descriptor = struct.pack(">BBBBII", 0, 1, rows - 1, cols - 1, width, height)
    else:
        descriptor = struct.pack(">BBBBHH", 0, 0, rows - 1, cols - 1, width, height)
    ispe = fullbox("ispe", 0, 0, struct.pack(">II", width, height))
    extra = [(p, e) for p, e in tiles[0]["props"] if prop_type(p) in ("colr", "pixi")]
    items.append((grid_id, dict(type="grid", hidden=False, data=descriptor, in_idat=True,
                                props=[(ispe, False)] + extra)))
    refs = [("dimg", grid_id, list(range(1, len(tiles) + 1)))]
    write(out, src["brands"], grid_id, items, refs)


def make_irot(src_path, out, angle):
    src = parse(src_path)
    irot = box("irot", bytes([angle & 3]))
    items = sorted(src["items"].items())
    primary = src["items"][src["primary"]]
    # Transformative properties come after the descriptive ones and are marked essential.
    primary["props"] = [p for p in primary["props"] if prop_type(p[0]) != "irot"] + [(irot, True)]
    write(out, src["brands"], src["primary"], items, src["refs"])


def make_depth(out, primary_path, depth_path):
    main, dep = parse(primary_path), parse(depth_path)
    primary = main["items"][main["primary"]]
    depth = dict(dep["items"][dep["primary"]])
    auxc = fullbox("auxC", 0, 0, b"urn:mpeg:hevc:2015:auxid:2\0")
    depth["props"] = list(depth["props"]) + [(auxc, True)]
    # The depth map is item 1 (listed first), the primary item 2.
    items = [(1, depth), (2, primary)]
    write(out, main["brands"], 2, items, [("auxl", 1, [2])])


def make_icc(directory):
    """Display P3 (DCI-P3 primaries, D65 white, sRGB tone curve: Apple's definition) and sRGB,
    built by Little CMS with a fixed creation date so that the bytes are reproducible."""
    import ctypes

    lcms = ctypes.CDLL("liblcms2.so.2")

    class xyY(ctypes.Structure):
        _fields_ = [("x", ctypes.c_double), ("y", ctypes.c_double), ("Y", ctypes.c_double)]

    lcms.cmsBuildParametricToneCurve.restype = ctypes.c_void_p
    lcms.cmsBuildParametricToneCurve.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_double)]
    lcms.cmsCreateRGBProfile.restype = ctypes.c_void_p
    lcms.cmsCreateRGBProfile.argtypes = [ctypes.POINTER(xyY), ctypes.POINTER(xyY * 3), ctypes.c_void_p * 3]
    lcms.cmsCreate_sRGBProfile.restype = ctypes.c_void_p
    lcms.cmsMLUalloc.restype = ctypes.c_void_p
    lcms.cmsMLUalloc.argtypes = [ctypes.c_void_p, ctypes.c_uint]
    lcms.cmsMLUsetASCII.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]
    lcms.cmsWriteTag.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p]
    lcms.cmsSetProfileVersion.argtypes = [ctypes.c_void_p, ctypes.c_double]
    lcms.cmsSaveProfileToMem.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint)]
    lcms.cmsCloseProfile.argtypes = [ctypes.c_void_p]

    def sig(s):
        return int.from_bytes(s.encode(), "big")

    def save(profile, description, path):
        for tag, text in (("desc", description), ("cprt", "No copyright, use freely")):
            mlu = lcms.cmsMLUalloc(None, 1)
            lcms.cmsMLUsetASCII(mlu, b"en", b"US", text.encode())
            lcms.cmsWriteTag(profile, sig(tag), mlu)
        lcms.cmsSetProfileVersion(profile, 4.3)
        size = ctypes.c_uint(0)
        lcms.cmsSaveProfileToMem(profile, None, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lcms.cmsSaveProfileToMem(profile, buf, ctypes.byref(size))
        data = bytearray(buf.raw[:size.value])
        data[24:36] = struct.pack(">6H", 2024, 1, 1, 0, 0, 0)  # creation date: fixed
        data[84:100] = bytes(16)  # profile ID: none
        open(path, "wb").write(bytes(data))
        lcms.cmsCloseProfile(profile)

    srgb_curve = (ctypes.c_double * 5)(2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045)
    curve = lcms.cmsBuildParametricToneCurve(None, 4, srgb_curve)
    white = xyY(0.3127, 0.3290, 1.0)
    primaries = (xyY * 3)(xyY(0.680, 0.320, 1.0), xyY(0.265, 0.690, 1.0), xyY(0.150, 0.060, 1.0))
    curves = (ctypes.c_void_p * 3)(curve, curve, curve)
    save(lcms.cmsCreateRGBProfile(ctypes.byref(white), ctypes.byref(primaries), curves),
         "Display P3", f"{directory}/display-p3.icc")
    save(lcms.cmsCreate_sRGBProfile(), "sRGB IEC61966-2.1", f"{directory}/srgb.icc")


def make_overlapping(src_path, out, n, region, extents):
    src = parse(src_path)
    prim = src["items"][src["primary"]]
    ipco = [p for p, e in prim["props"]]
    ipma = struct.pack(">I", 1) + struct.pack(">HB", 1, len(ipco)) + bytes((0x80 if e else 0) | (k + 1) for k, (p, e) in enumerate(prim["props"]))
    iprp = box("iprp", box("ipco", b"".join(ipco)) + fullbox("ipma", 0, 0, ipma))
    infes = [fullbox("infe", 2, 0, struct.pack(">HH4s", 1, 0, prim["type"].encode("latin-1")) + b"\0")]
    infes += [fullbox("infe", 2, 1, struct.pack(">HH4s", 2 + i, 0, b"Exif") + b"\0") for i in range(n)]
    iinf = fullbox("iinf", 0, 0, struct.pack(">H", len(infes)) + b"".join(infes))
    iref = fullbox("iref", 0, 0, b"".join(box("cdsc", struct.pack(">HHH", 2 + i, 1, 1)) for i in range(n)))
    hdlr = fullbox("hdlr", 0, 0, struct.pack(">I4s12x", 0, b"pict") + b"\0")
    pitm = fullbox("pitm", 0, 0, struct.pack(">H", 1))

    def iloc(mdat_start):
        body = struct.pack(">BBH", 0x44, 0x00, 1 + n)
        body += struct.pack(">HHHII", 1, 0, 1, mdat_start, len(prim["data"]))
        region_start = mdat_start + len(prim["data"])
        for i in range(n):
            body += struct.pack(">HHH", 2 + i, 0, extents) + struct.pack(">II", region_start, region) * extents
        return fullbox("iloc", 0, 0, body)

    ftyp = box("ftyp", src["brands"][:8] + b"mif1heic")
    meta = lambda start: fullbox("meta", 0, 0, hdlr + pitm + iloc(start) + iinf + iref + iprp)
    start = len(ftyp) + len(meta(0)) + 8
    exif = b"\0\0\0\0MM\0\x2a\0\0\0\x08\0\0"
    with open(out, "wb") as f:
        f.write(ftyp + meta(start) + box("mdat", prim["data"] + exif + b"\0" * (region - len(exif))))


def make_loop(src_path, out, kind):
    src = parse(src_path)
    image = coded_images(src)[0]
    ispe = next(p for p, _ in image["props"] if prop_type(p) == "ispe")
    width, height = struct.unpack(">II", ispe[12:20])
    extra = [(p, e) for p, e in image["props"] if prop_type(p) in ("colr", "pixi")]

    def grid():
        return dict(type="grid", hidden=False, data=struct.pack(">BBBBHH", 0, 0, 0, 0, width, height), in_idat=True,
                    props=[(ispe, False)] + extra)

    def iden():
        return dict(type="iden", hidden=False, data=b"", props=[(ispe, False)] + extra)

    items, refs, primary = [(1, dict(image, hidden=True))], [], 2
    if kind == "grid":
        items.append((2, grid()))
        refs = [("dimg", 2, [2])]
    elif kind == "iden":
        items.append((2, iden()))
        refs = [("dimg", 2, [2])]
    elif kind == "cycle":
        items += [(2, grid()), (3, dict(grid(), hidden=True))]
        refs = [("dimg", 2, [3]), ("dimg", 3, [2])]
    elif kind == "alpha":
        items = [(1, dict(image, hidden=False))]
        refs, primary = [("auxl", 1, [1])], 1
    elif kind.startswith("chain"):
        n = int(kind[5:])
        items += [(i, dict(iden(), hidden=i != 2)) for i in range(2, n + 2)]
        refs = [("dimg", i, [i + 1 if i < n + 1 else 1]) for i in range(2, n + 2)]
    else:
        raise SystemExit(f"loop: unknown kind {kind}")
    write(out, src["brands"], primary, items, refs)


def main(argv):
    cmd = argv[1]
    if cmd == "grid":
        out, w, h, cols, rows, tiles = argv[2:8]
        make_grid(out, int(w), int(h), int(cols), int(rows), tiles)
    elif cmd == "irot":
        make_irot(argv[2], argv[3], int(argv[4]))
    elif cmd == "depth":
        make_depth(argv[2], argv[3], argv[4])
    elif cmd == "loop":
        make_loop(argv[2], argv[3], argv[4])
    elif cmd == "overlapping":
        make_overlapping(argv[2], argv[3], int(argv[4]), int(argv[5]), int(argv[6]))
    elif cmd == "icc":
        make_icc(argv[2])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
