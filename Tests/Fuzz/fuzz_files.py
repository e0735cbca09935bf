#!/usr/bin/env python3
"""Mutation fuzzing of photoprep's decoders, out of band (not part of scripts/test.sh: it runs for minutes to hours).

Mutants of every fixture in TestImages/ (edge/, formats/, orientation/, photos/) — bytes flipped, cut short, runs
repeated, boundary values (0, 0x7FFFFFFF, 0xFFFFFFFF …) written where lengths and sizes live, ISO-BMFF box sizes and
fields (HEIC, AVIF), PNG chunk fields with their CRCs made right again, chunks repeated, JPEG marker lengths and frame
sizes, EXIF/XMP/ICC segments, WebP's RIFF chunk fields, splices of two files — go in batches through three commands:
`prepare` (files read row by row, as the server reads an upload), `bench --thumbnails 512,128` (bytes in memory,
thumbnails as the server makes them) and `probe` (every header read before any pixel limit). A batch is a finding
when a command dies by a signal (a Swift trap is SIGILL: in `photoprep serve` it would stop the server), hangs past
600 s, or peaks over 1.5 GB; its mutants and stderr are kept under the work folder. Mutants are fixed by the seed.

  Tests/Fuzz/fuzz_files.py BINARY SEED BATCHES [PER_BATCH (150)] [WORK (/tmp/photoprep-fuzz)]
  e.g. swift build -c release && Tests/Fuzz/fuzz_files.py .build/release/photoprep 1 100

Found so far: a PNG declaring 4278290080 × 4294901760 pixels (HostileFormatTests.pngSizesAtTheFieldsLimits…).
"""
import os, random, shutil, struct, subprocess, sys, time, zlib

BIN = sys.argv[1]; SEED = int(sys.argv[2]); BATCHES = int(sys.argv[3]); PER = int(sys.argv[4]) if len(sys.argv) > 4 else 150
WORK = sys.argv[5] if len(sys.argv) > 5 else "/tmp/photoprep-fuzz"
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "TestImages")
seeds = [os.path.join(d, f) for d in ("edge", "formats", "orientation", "photos") for f in sorted(os.listdir(os.path.join(ROOT, d)))
         if f.split(".")[-1] in ("jpg", "png", "webp", "heic", "avif")]
seeds = [s for s in seeds if 64 < os.path.getsize(os.path.join(ROOT, s)) < 3_000_000]
data = {s: open(os.path.join(ROOT, s), "rb").read() for s in seeds}
rng = random.Random(SEED)

def boxes(b):  # ISO-BMFF boxes, recursively for containers: offsets of size fields
    out = []
    def walk(start, end, depth):
        i = start
        while i + 8 <= end and depth < 6:
            size = struct.unpack(">I", b[i:i+4])[0]; typ = b[i+4:i+8]
            if size < 8 or i + size > end: break
            out.append((i, typ, size))
            hdr = 8
            if typ in (b"meta",): hdr = 12
            if typ in (b"meta", b"iprp", b"ipco", b"dinf", b"moov", b"trak", b"mdia", b"minf", b"stbl", b"iinf"):
                walk(i + hdr + (6 if typ == b"iinf" else 0), i + size, depth + 1)
            i += size
    walk(0, len(b), 0)
    return out

def pngchunks(b):
    out = []; i = 8
    while i + 8 <= len(b):
        n = struct.unpack(">I", b[i:i+4])[0]; out.append((i, b[i+4:i+8], n)); i += 12 + n
        if n > len(b): break
    return out

def fixcrc(b):  # recompute PNG CRCs so mutants get past the checksum
    b = bytearray(b)
    for i, typ, n in pngchunks(bytes(b)):
        if i + 12 + n <= len(b): b[i+8+n:i+12+n] = struct.pack(">I", zlib.crc32(bytes(b[i+4:i+8+n])) & 0xffffffff)
    return bytes(b)

VALUES = [0, 1, 2, 0x7F, 0x80, 0xFF, 0x100, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 65535, 32768, 16384]

def mutate(name, b):
    b = bytearray(b); n = len(b); kind = rng.randrange(13)
    if kind == 0:
        for _ in range(rng.randint(1, 32)): b[rng.randrange(n)] = rng.randrange(256)
    elif kind == 1:
        del b[rng.randint(1, n - 1):]
    elif kind == 2:
        s = rng.randrange(n); run = b[s:s + rng.randint(1, 256)]; b[s:s] = run * rng.randint(1, 16)
    elif kind == 3:
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(max(1, n - 4)); v = rng.choice(VALUES); w = rng.choice([1, 2, 4]); big = rng.random() < .5
            vb = v.to_bytes(8, "big" if big else "little")[-w:] if big else v.to_bytes(8, "little")[:w]
            b[at:at + w] = vb
    elif kind == 4:
        for _ in range(rng.randint(1, 8)): b[rng.randrange(min(n, 4096))] = rng.randrange(256)
    elif kind == 5 and name.endswith((".heic", ".avif")):
        bx = boxes(bytes(b))
        if bx:
            for _ in range(rng.randint(1, 3)):
                i, typ, size = rng.choice(bx); field = i + rng.choice([0, 8, 12, 16, 20, 24])
                if field + 4 <= n: b[field:field+4] = struct.pack(">I", rng.choice(VALUES + [size, size + 1, size - 1, rng.randrange(1 << 32)]) & 0xffffffff)
    elif kind == 6 and name.endswith(".png"):
        ch = pngchunks(bytes(b))
        if ch:
            i, typ, ln = rng.choice(ch); off = i + 8 + rng.randrange(max(1, min(ln, 16)))
            if off + 4 <= n: b[off:off+4] = struct.pack(">I", rng.choice(VALUES) & 0xffffffff)
            b = bytearray(fixcrc(bytes(b)))
    elif kind == 7 and name.endswith(".png"):
        ch = pngchunks(bytes(b))
        if len(ch) > 2:  # duplicate / reorder chunks
            i, typ, ln = rng.choice(ch[1:]); c = b[i:i + 12 + ln]; j = rng.choice(ch)[0]; b[j:j] = c * rng.randint(1, 3)
    elif kind == 8:  # splice with another seed
        other = data[rng.choice(seeds)]; at = rng.randrange(n); b[at:] = other[rng.randrange(len(other)):][: rng.randint(1, 100000)]
    elif kind == 9 and name.endswith(".jpg"):  # marker surgery: lengths and dimensions in SOF/DHT/DQT/SOS
        idx = [i for i in range(n - 4) if b[i] == 0xFF and b[i+1] in (0xC0, 0xC1, 0xC2, 0xC4, 0xDB, 0xDA, 0xDD, 0xE1, 0xE2)]
        if idx:
            i = rng.choice(idx); off = i + 2 + rng.randrange(12)
            if off + 2 <= n: b[off:off+2] = struct.pack(">H", rng.choice([0, 1, 2, 0xFFFF, 0x8000, 0x7FFF, 65500, 3, 4, 16]))
    elif kind in (10, 11) and name.endswith(".jpg"):  # inside APP1 (EXIF, XMP) and APP2 (ICC): offsets, counts, tags
        segs = []; i = 2
        while i + 4 <= n and b[i] == 0xFF and b[i+1] not in (0xDA, 0xD9):
            ln = struct.unpack(">H", b[i+2:i+4])[0]
            if b[i+1] in (0xE1, 0xE2): segs.append((i + 4, i + 2 + ln))
            i += 2 + ln
        if segs:
            lo, hi = rng.choice(segs); hi = min(hi, n)
            for _ in range(rng.randint(1, 6)):
                if hi - lo < 8: break
                at = rng.randrange(lo, hi - 4); w = rng.choice([1, 2, 4])
                v = rng.choice(VALUES + [rng.randrange(1 << 32)]); order = rng.choice(["big", "little"])
                b[at:at + w] = (v & ((1 << (8 * w)) - 1)).to_bytes(w, order)
    elif kind == 12 and name.endswith(".webp"):  # RIFF chunks: sizes, VP8X's 24-bit canvas, ANMF offsets, VP8/VP8L sizes
        i, chunks = 12, []
        while i + 8 <= n:
            size = struct.unpack("<I", b[i+4:i+8])[0]; chunks.append((i, size)); i += 8 + size + (size & 1)
        if chunks:
            at, size = rng.choice(chunks); field = at + rng.choice([4, 8, 12, 14, 16, 18, 20, 22])
            w = rng.choice([1, 2, 3, 4])
            if field + w <= n: b[field:field + w] = (rng.choice(VALUES + [rng.randrange(1 << 32)]) & ((1 << (8 * w)) - 1)).to_bytes(w, "little")
    else:
        to, fr = rng.randrange(n), rng.randrange(n); seg = bytes(b[fr:fr + rng.randint(4, 64)]); b[to:to + len(seg)] = seg
    return bytes(b)

work = f"{WORK}/w{SEED}"; findings = []
for batch in range(BATCHES):
    shutil.rmtree(work, ignore_errors=True); os.makedirs(work + "/in")
    paths = []
    for k in range(PER):
        s = rng.choice(seeds); m = mutate(s, data[s]); ext = s.rsplit(".", 1)[1]
        p = f"{work}/in/m{batch:04d}_{k:03d}.{ext}"; open(p, "wb").write(m); paths.append(p)
    for cmd in ([BIN, "prepare", work + "/in", "--out", work + "/out", "--preset", "profile", "--jobs", "2", "--quiet", "--force"],
                [BIN, "bench", "--runs", "1", "--preset", "profile", "--thumbnails", "512,128", work + "/in"],
                [BIN, "probe", "--json"] + paths):
        t0 = time.time()
        try:
            r = subprocess.run(["/usr/bin/time", "-f", "MAXRSS %M"] + cmd, capture_output=True, timeout=600)
            rc = r.returncode; err = r.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired:
            rc = "timeout"; err = ""
        rss = int(err.rsplit("MAXRSS ", 1)[1].split()[0]) if "MAXRSS " in err else 0
        dt = time.time() - t0
        bad = rc == "timeout" or (isinstance(rc, int) and rc not in (0, 1)) or "signal" in err.lower() or "Fatal error" in err or rss > 1_500_000
        if bad:
            findings.append((batch, cmd[1], rc, rss, dt))
            print(f"FINDING batch {batch} {cmd[1]} rc={rc} rss={rss} KB {dt:.1f}s; kept {work}-b{batch}", flush=True)
            shutil.copytree(work, f"{work}-b{batch}-{cmd[1]}", dirs_exist_ok=True)
            open(f"{work}-b{batch}-{cmd[1]}/stderr.txt", "w").write(err)
    if batch % 5 == 0: print(f"batch {batch} done, findings {len(findings)}", flush=True)
print("FINDINGS", findings)
