#!/usr/bin/env python3
"""Builds the seed corpora of the fuzz harnesses at run time (nothing is stored in the repo).

    python3 fuzz/make_seeds.py TESTDATA OUT

OUT/<harness>/ gets:
- image: the shared test images of every format (up to MAX_SEED bytes; those up to
  SMALL_SEED behind each of a few parameter prefixes, see image_harness.h, larger ones behind
  one), small PNGs made here for what the shared data lacks (Adam7, 1/2/4-bit, tRNS, 16-bit,
  eXIf), and, where Pillow can write them, small images in each format and its variants
  (BMP bit depths, PNM P1-P6 and 16-bit, TIFF compressions, tiles and depths, WebP
  lossy/lossless/alpha, JPEG 2000);
- file_list: the shared list files and a few made here; sample_order: configurations;
- tfrecord: the first records of the shared TFRecord files, small tf.Examples made here (framed,
  bare) and index files; recordio: .rec files with MXNet image records (whole and split into
  parts) and their .idx files; tar: the shared WebDataset shards and archives made here in the
  ustar, GNU and pax formats, and wds2idx index files; caffe: caffe.Datum and
  caffe2.TensorProtos records; npy: .npy files of every element type, both orders, versions
  1 to 3; lmdb: LMDB data files written by liblmdb (needs the `lmdb` package); dali_format:
  pipelines in DALI's serialized format made here, and by DALI where it is installed.
"""
import gzip
import io
import random
import struct
import sys
import tarfile
import zlib
from pathlib import Path

MAX_SEED = 256 * 1024  # larger files slow every mutation down, and their size is refused anyway
SMALL_SEED = 64 * 1024

# Parameter prefixes (image_harness.h): full RGB decode; roi + strided + orientation; gray at
# scale 1/2 to 16-bit; BGR roi at 1/8, strided; ANY with a tiny max_pixels.
IMAGE_PREFIXES = [
    bytes([0x00, 0, 0, 255, 255, 0x00]),
    bytes([0xC4, 40, 60, 128, 100, 0x00]),
    bytes([0x2A, 0, 0, 255, 255, 0x00]),
    bytes([0xD9, 90, 20, 30, 200, 0x00]),
    bytes([0x07, 0, 0, 255, 255, 0x01]),
]


def files(root, patterns):
    out = []
    for pat in patterns:
        out += [p for p in sorted(root.glob(pat)) if p.is_file() and p.stat().st_size <= MAX_SEED]
    return out


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def make_png(rng, w, h, color_type, depth, interlace=False, plte=0, trns=None, exif=None):
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color_type]
    bits = channels * depth

    def rows(pw, ph):
        rb = (pw * bits + 7) // 8
        return b"".join(bytes([rng.randrange(5)]) + rng.randbytes(rb) for _ in range(ph))

    if interlace:
        raw = b""
        for xs, ys, dx, dy in [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4),
                               (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]:
            pw, ph = (w - xs + dx - 1) // dx, (h - ys + dy - 1) // dy
            if pw > 0 and ph > 0:
                raw += rows(pw, ph)
    else:
        raw = rows(w, h)
    out = b"\x89PNG\r\n\x1a\n"
    out += chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, color_type, 0, 0, int(interlace)))
    if exif is not None:
        out += chunk(b"eXIf", exif)
    if plte:
        out += chunk(b"PLTE", rng.randbytes(3 * plte))
    if trns is not None:
        out += chunk(b"tRNS", trns)
    out += chunk(b"IDAT", zlib.compress(raw))
    out += chunk(b"IEND", b"")
    return out


def exif_orientation(value):
    # Big-endian TIFF header, one IFD entry: Orientation (0x0112), SHORT, count 1.
    return (b"MM\x00\x2a" + struct.pack(">I", 8) + struct.pack(">H", 1) +
            struct.pack(">HHIHH", 0x0112, 3, 1, value, 0) + struct.pack(">I", 0))


def made_pngs():
    rng = random.Random(7)
    return {
        "adam7_rgb8": make_png(rng, 13, 7, 2, 8, interlace=True),
        "adam7_graya16": make_png(rng, 9, 11, 4, 16, interlace=True),
        "adam7_gray2": make_png(rng, 6, 6, 0, 2, interlace=True),
        "gray1_trns": make_png(rng, 17, 5, 0, 1, trns=b"\x00\x01"),
        "palette4_trns": make_png(rng, 10, 10, 3, 4, plte=16, trns=bytes(range(0, 160, 10))),
        "adam7_palette8": make_png(rng, 12, 9, 3, 8, interlace=True, plte=256),
        "rgba8_exif6": make_png(rng, 8, 6, 6, 8, exif=exif_orientation(6)),
        "rgb16_trns": make_png(rng, 5, 3, 2, 16, trns=b"\x00\x01\x00\x02\x00\x03"),
        "gray8_exif3": make_png(rng, 7, 4, 0, 8, exif=exif_orientation(3)),
    }


def write(dir_, name, data):
    dir_.mkdir(parents=True, exist_ok=True)
    (dir_ / name).write_bytes(data)


def pillow_images():
    """Small images in the formats and variants Pillow writes; {} without Pillow."""
    try:
        import numpy as np
        from PIL import Image
    except ImportError:
        return {}
    rng = np.random.default_rng(5)
    y, x = np.mgrid[0:23, 0:37]
    rgb = np.stack([x * 7, y * 11, (x * y) % 256], -1).astype(np.uint8)
    rgb[::5, ::3] = rng.integers(0, 256, rgb[::5, ::3].shape, dtype=np.uint8)
    im = Image.fromarray(rgb)
    rgba = Image.fromarray(np.dstack([rgb, (x * 5).astype(np.uint8)]))
    gray = im.convert("L")
    out = {}

    def save(name, image, fmt, **kw):
        buf = io.BytesIO()
        try:
            image.save(buf, fmt, **kw)
        except Exception:  # a variant this Pillow cannot write
            return
        out[name] = buf.getvalue()

    save("rgb24.bmp", im, "BMP")
    save("rgba32.bmp", rgba, "BMP")
    save("gray8.bmp", gray, "BMP")
    save("pal8.bmp", im.quantize(200), "BMP")
    save("pal4.bmp", im.quantize(16), "BMP", bits=4)
    save("bw1.bmp", gray.convert("1"), "BMP")
    save("p6.ppm", im, "PPM")
    save("p5.pgm", gray, "PPM")
    save("p4.pbm", gray.convert("1"), "PPM")
    save("p3.ppm", im, "PPM", plain=True)
    save("p2.pgm", gray, "PPM", plain=True)
    save("p1.pbm", gray.convert("1"), "PPM", plain=True)
    save("p5_16.pgm", Image.fromarray((np.asarray(gray).astype(np.uint16) * 257)), "PPM")
    for comp in ("raw", "tiff_lzw", "tiff_adobe_deflate", "packbits", "jpeg"):
        save(f"rgb_{comp}.tif", im, "TIFF", compression=comp)
    save("rgba_lzw.tif", rgba, "TIFF", compression="tiff_lzw")
    save("gray_tiled.tif", gray, "TIFF", tile=(16, 16))
    save("gray16.tif", Image.fromarray(np.asarray(gray).astype(np.uint16) * 257), "TIFF")
    save("bw_g4.tif", gray.convert("1"), "TIFF", compression="group4")
    save("pal.tif", im.quantize(64), "TIFF")
    exif = Image.Exif()
    exif[0x0112] = 6
    save("exif6.tif", im, "TIFF", exif=exif)
    save("lossy.webp", im, "WEBP", quality=50)
    save("lossless.webp", im, "WEBP", lossless=True)
    save("alpha.webp", rgba, "WEBP", quality=60)
    save("alpha_lossless.webp", rgba, "WEBP", lossless=True)
    save("rgb.jp2", im, "JPEG2000")
    save("rgb.j2k", im, "JPEG2000")
    save("gray_lossless.jp2", gray, "JPEG2000", irreversible=False)
    save("rgba.jp2", rgba, "JPEG2000", tile_size=(16, 16))
    save("rgb_q.jpg", im, "JPEG", quality=30)
    save("rgb_prog.jpg", im, "JPEG", progressive=True)
    save("gray.jpg", gray, "JPEG")
    save("cmyk.jpg", im.convert("CMYK"), "JPEG")
    return out


# ---- protobuf wire format (tf.Example, caffe.Datum, caffe2.TensorProtos)

def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def field(num, wire, payload):
    if wire == 0:
        return varint(num << 3) + varint(payload)
    if wire == 2:
        return varint(num << 3 | 2) + varint(len(payload)) + payload
    return varint(num << 3 | wire) + payload  # 1, 5: fixed bytes


def tf_feature(kind, values, packed=True):
    if kind == "bytes":
        lst = b"".join(field(1, 2, v) for v in values)
        return field(1, 2, lst)
    if kind == "float":
        if packed:
            lst = field(1, 2, b"".join(struct.pack("<f", v) for v in values))
        else:
            lst = b"".join(field(1, 5, struct.pack("<f", v)) for v in values)
        return field(2, 2, lst)
    if packed:
        lst = field(1, 2, b"".join(varint(v) for v in values))
    else:
        lst = b"".join(field(1, 0, v) for v in values)
    return field(3, 2, lst)


def tf_example(features):
    entries = b"".join(field(1, 2, field(1, 2, k.encode()) + field(2, 2, v)) for k, v in features)
    return field(1, 2, entries)


def masked_crc(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def tf_frame(payload):
    head = struct.pack("<Q", len(payload))
    return head + struct.pack("<I", masked_crc(head)) + payload + struct.pack("<I", masked_crc(payload))


def tf_records(path, count):
    data, out, off = path.read_bytes(), [], 0
    while off + 12 <= len(data) and len(out) < count:
        (n,) = struct.unpack_from("<Q", data, off)
        out.append(data[off:off + 16 + n])
        off += 16 + n
    return out


def tfrecord_seeds(testdata, out):
    tiny_jpeg = (testdata / "fuzzing" / "jpeg" / "1.jpg").read_bytes() if (testdata / "fuzzing" / "jpeg" / "1.jpg").exists() else b"\xff\xd8\xff\xd9"
    examples = [
        tf_example([("image/encoded", tf_feature("bytes", [tiny_jpeg])),
                    ("image/height", tf_feature("int64", [23])), ("image/width", tf_feature("int64", [37])),
                    ("image/format", tf_feature("bytes", [b"jpeg"])),
                    ("image/object/bbox/xmin", tf_feature("float", [0.1, 0.5, 0.25, 0.75])),
                    ("image/object/bbox/ymax", tf_feature("float", [0.9, 0.2], packed=False)),
                    ("image/object/class/label", tf_feature("int64", [1, 2**40, -1], packed=False)),
                    ("image/object/class/text", tf_feature("bytes", [b"cat", b"dog"])),
                    ("label", tf_feature("int64", [7])), ("id", tf_feature("bytes", [b"0001"]))]),
        tf_example([("x", tf_feature("float", [1.0, 2.0, 3.0, 4.0])), ("label", tf_feature("int64", [3, 4]))]),
        tf_example([("image/filename", tf_feature("bytes", [b"a.jpg"])), ("label", b"")]),
        tf_example([]),
    ]
    framed = b"".join(tf_frame(e) for e in examples)
    seeds = [bytes([0]) + framed, bytes([1]) + framed]
    seeds += [bytes([2]) + e for e in examples]
    for f in sorted((testdata / "records" / "tfrecord").rglob("*")):
        if f.is_file():
            recs = tf_records(f, 2)
            seeds += [bytes([0]) + recs[0], bytes([1]) + b"".join(recs)]
            seeds += [bytes([2]) + r[12:-4] for r in recs]
    offs, pos = [], 0
    for e in examples:
        offs.append((pos, len(e) + 16))
        pos += len(e) + 16
    seeds.append(bytes([3]) + "".join(f"{o} {n}\n" for o, n in offs).encode())
    seeds.append(bytes([3]) + b"0 16\n\n  32 100 \n")
    for i, d in enumerate(seeds):
        write(out / "tfrecord", f"{i:02d}", d)


def recordio_part(cflag, data):
    pad = (4 - len(data) % 4) % 4
    return struct.pack("<II", 0xCED7230A, cflag << 29 | len(data)) + data + b"\0" * pad


def recordio_seeds(testdata, out):
    img = (testdata / "fuzzing" / "jpeg" / "2.jpg").read_bytes() if (testdata / "fuzzing" / "jpeg" / "2.jpg").exists() else b"img"
    magic = struct.pack("<I", 0xCED7230A)
    one = struct.pack("<IfQQ", 0, 3.0, 7, 0) + img
    multi = struct.pack("<IfQQ", 3, 0.0, 8, 0) + struct.pack("<3f", 1, 2, 3) + img[:40]
    # A record whose data held the magic number twice: written in three parts around them.
    pieces = [struct.pack("<IfQQ", 0, 1.0, 9, 0) + b"abcd", b"efgh" * 3, b"ijk"]
    split = (recordio_part(1, pieces[0]) + recordio_part(2, pieces[1]) + recordio_part(3, pieces[2]))
    rec = recordio_part(0, one) + recordio_part(0, multi) + split + recordio_part(0, b"short")
    seeds = [bytes([0]) + rec, bytes([0]) + recordio_part(0, one), bytes([0]) + split,
             bytes([0]) + recordio_part(0, magic + b"x" * 20)]
    offsets, pos = [], 0
    for part in (recordio_part(0, one), recordio_part(0, multi), split):
        offsets.append(pos)
        pos += len(part)
    idx = "".join(f"{k}\t{o}\n" for k, o in enumerate(offsets)).encode()
    seeds.append(bytes([1]) + struct.pack("<H", len(rec)) + rec + idx)
    seeds.append(bytes([1]) + struct.pack("<H", len(rec)) + rec + b"5\t0\n2\t0\n")
    for i, d in enumerate(seeds):
        write(out / "recordio", f"{i:02d}", d)


def make_tar(fmt, members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for name, data, kind in members:
            info = tarfile.TarInfo(name)
            info.mtime = 0
            if kind == "dir":
                info.type = tarfile.DIRTYPE
                t.addfile(info)
            elif kind == "link":
                info.type = tarfile.SYMTYPE
                info.linkname = data.decode()
                t.addfile(info)
            else:
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def wds_index(tar_bytes):
    """DALI's wds2idx v1.2 index of an archive (regular files grouped by key)."""
    samples, last = [], None
    with tarfile.open(fileobj=io.BytesIO(tar_bytes)) as t:
        for m in t.getmembers():
            if not m.isfile():
                continue
            base = m.name.rsplit("/", 1)[-1]
            dot = base.find(".")
            key = m.name[:len(m.name) - len(base) + dot] if dot >= 0 else m.name
            ext = base[dot + 1:] if dot >= 0 else ""
            if key != last:
                samples.append([])
                last = key
            samples[-1].append(f"{ext} {m.offset_data} {m.size} {base}")
    return (f"v1.2 {len(samples)}\n" + "".join(" ".join(s) + "\n" for s in samples)).encode()


def tar_seeds(testdata, out):
    members = [("a/000001.jpg", b"\xff\xd8jpeg", "file"), ("a/000001.cls", b"3", "file"),
               ("a/000001.seg.png", b"\x89PNG", "file"), ("a/000002.jpg", b"x" * 700, "file"),
               ("a/000002.cls", b"4", "file"), ("a/.hidden", b"h", "file"), ("a/dir", b"", "dir"),
               ("a/link.jpg", b"000001.jpg", "link"),
               ("b/" + "long_name_" * 12 + ".txt", b"long", "file")]
    seeds = []
    for fmt in (tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT):
        ms = members if fmt != tarfile.USTAR_FORMAT else [m for m in members if len(m[0]) < 100]
        t = make_tar(fmt, ms)
        seeds.append(bytes([0]) + t)
        seeds.append(bytes([0]) + t[:-1024])  # without the closing blocks
        if len(t) < 65536:
            seeds.append(bytes([1]) + struct.pack("<H", len(t)) + t + wds_index(t))
    seeds.append(bytes([0]) + gzip.compress(make_tar(tarfile.GNU_FORMAT, members[:2])))
    shards = testdata / "records" / "webdataset"
    if (shards / "mpdata.tar").exists():
        seeds.append(bytes([0]) + (shards / "mpdata.tar").read_bytes())
    if (shards / "sample.tgz").exists():
        with tarfile.open(shards / "sample.tgz") as src:
            kept = [(m.name, src.extractfile(m).read(), "file") for m in src.getmembers()[:12] if m.isfile()]
        t = make_tar(tarfile.GNU_FORMAT, kept)
        seeds.append(bytes([0]) + t)
        if len(t) < 65536:
            seeds.append(bytes([1]) + struct.pack("<H", len(t)) + t + wds_index(t))
    for i, d in enumerate(seeds):
        write(out / "tar", f"{i:02d}", d)


def caffe_seeds(out):
    pixels = bytes(range(48))
    datums = [
        field(1, 0, 3) + field(2, 0, 4) + field(3, 0, 4) + field(4, 2, pixels) + field(5, 0, 7),
        field(4, 2, b"\xff\xd8\xff\xe0jpeg") + field(5, 0, 2) + field(7, 0, 1),
        field(1, 0, 1) + field(2, 0, 2) + field(3, 0, 2) + field(6, 2, struct.pack("<4f", 1, 2, 3, 4)) +
        b"".join(field(6, 5, struct.pack("<f", v)) for v in (5, 6)) + field(5, 0, 2**32 - 1),
        field(9, 0, 5) + field(10, 2, b"unknown") + field(11, 1, b"8bytes!!") + field(12, 5, b"4byt"),
    ]
    def tensor(dims, dtype, body):
        return field(1, 2, b"".join(varint(d) for d in dims)) + field(2, 0, dtype) + body
    protos = [
        field(1, 2, tensor([2, 2, 3], 3, field(5, 2, bytes(12)))) + field(1, 2, tensor([1], 2, field(4, 0, 5))),
        field(1, 2, tensor([3], 1, field(3, 2, struct.pack("<3f", 1, 2, 3)))) +
        field(1, 2, tensor([2], 10, field(10, 2, varint(1) + varint(2**63)))),
        field(1, 2, tensor([2], 13, field(9, 2, struct.pack("<2d", 1.5, -2)))) +
        field(1, 2, tensor([1], 4, field(6, 2, b"label"))) + field(1, 2, field(1, 0, 4) + field(1, 0, 5)),
    ]
    for i, d in enumerate(datums):
        write(out / "caffe", f"datum_{i}", bytes([0]) + d)
    for i, d in enumerate(protos):
        write(out / "caffe", f"protos_{i}", bytes([1]) + d)


def lmdb_seeds(out):
    """Data files written by liblmdb (the `lmdb` package): one record, records on overflow pages,
    a tree of three levels (long keys), deleted records, no records, and a Caffe Datum database."""
    import os
    import tempfile
    import lmdb
    rng = random.Random(5)

    def db(name, records, delete=0.0):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "data.mdb")
            env = lmdb.open(path, subdir=False, lock=False, map_size=1 << 24)
            with env.begin(write=True) as txn:
                for k, v in records:
                    txn.put(k, v)
            if delete:
                with env.begin(write=True) as txn:
                    keys = [k for k, _ in txn.cursor()]
                    for k in rng.sample(keys, int(len(keys) * delete)):
                        txn.delete(k)
            env.close()
            data = open(path, "rb").read()
        if len(data) <= MAX_SEED:
            write(out / "lmdb", name, data)

    db("one", [(b"00000000", b"value")])
    db("overflow", [(b"%08d" % k, bytes([k]) * (6000 if k % 6 == 0 else 40 + 3 * k)) for k in range(60)])
    db("deep", [(b"%09d" % rng.randrange(10**9) + b"k" * 190, bytes(rng.randrange(300)))
                for _ in range(400)])
    db("deleted", [(b"%06d" % k, bytes(rng.randrange(200))) for k in range(300)], delete=0.5)
    db("empty", [(b"gone", b"x")], delete=1.0)
    db("datums", [(b"%08d" % k, field(4, 2, bytes(range(k % 200))) + field(5, 0, k)) for k in range(40)])


def npy_file(descr, shape, fortran, data, version=1):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': ({dims}), }}"
    pre = 10 if version == 1 else 12
    header += " " * ((64 - (pre + len(header) + 1) % 64) % 64) + "\n"
    size = struct.pack("<H", len(header)) if version == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + size + header.encode("latin1") + data


def npy_seeds(out):
    rng = random.Random(9)
    seeds = []
    for descr, size in (("<f4", 4), (">i2", 2), ("|u1", 1), ("<f8", 8), ("|b1", 1), (">f2", 2), ("<u8", 8)):
        for shape, fortran in (((3, 5, 2), "False"), ((4, 3), "True"), ((7,), "False"), ((), "False"),
                               ((2, 0, 3), "False")):
            n = 1
            for d in shape:
                n *= d
            data = bytes(rng.randrange(256) for _ in range(n * size))
            seeds.append(npy_file(descr, shape, fortran, data, version=1 + len(seeds) % 3))
    seeds.append(npy_file("<c8", (2,), "False", bytes(16)))
    seeds.append(npy_file("<f4", (2, 3), "False", bytes(8)))  # truncated
    for i, d in enumerate(seeds):
        prefix = bytes([0, 0, 255, 255]) if i % 2 else bytes([rng.randrange(256) for _ in range(4)])
        write(out / "npy", f"{i:02d}", prefix + d)


def fits_file(hdus):
    """A FITS file: hdus = [(cards, data)], each header padded to 2880 bytes with END, each data
    block to 2880 bytes."""
    def block(b, fill):
        return b + fill * ((2880 - len(b) % 2880) % 2880)
    out = b""
    for cards, data in hdus:
        text = "".join(f"{k:<8}= {v:>20}".ljust(80) for k, v in cards) + "END".ljust(80)
        out += block(text.encode("ascii"), b" ") + block(data, b"\0")
    return out


def fits_seeds(out):
    rng = random.Random(13)
    seeds = []
    for bitpix, fmt in ((8, "B"), (16, ">h"), (32, ">i"), (64, ">q"), (-32, ">f"), (-64, ">d")):
        for shape in ((5,), (3, 4), (2, 3, 2)):
            n = 1
            for d in shape:
                n *= d
            data = b"".join(struct.pack(fmt, rng.randrange(100)) for _ in range(n))
            axes = [(f"NAXIS{i + 1}", str(d)) for i, d in enumerate(reversed(shape))]
            scale = [("BZERO", "32768"), ("BSCALE", "1")] if bitpix == 16 and len(shape) == 2 else []
            primary = [("SIMPLE", "T"), ("BITPIX", "8"), ("NAXIS", "0"), ("EXTEND", "T")]
            image = ([("XTENSION", "'IMAGE   '"), ("BITPIX", str(bitpix)), ("NAXIS", str(len(shape)))] +
                     axes + [("PCOUNT", "0"), ("GCOUNT", "1")] + scale)
            seeds.append(fits_file([(primary, b""), (image, data), (image, data)]))
    seeds.append(fits_file([([("SIMPLE", "T"), ("BITPIX", "16"), ("NAXIS", "2"), ("NAXIS1", "3"),
                              ("NAXIS2", "2")], bytes(12))]))
    table = [("XTENSION", "'BINTABLE'"), ("BITPIX", "8"), ("NAXIS", "2"), ("NAXIS1", "4"),
             ("NAXIS2", "3"), ("PCOUNT", "0"), ("GCOUNT", "1"), ("ZIMAGE", "T")]
    seeds.append(fits_file([([("SIMPLE", "T"), ("BITPIX", "8"), ("NAXIS", "0")], b""), (table, bytes(12))]))
    seeds.append(seeds[0][:4000])  # truncated
    for i, d in enumerate(seeds):
        write(out / "fits", f"{i:02d}", bytes([1 + i % 3]) + d)


def dali_seeds(out):
    """Pipelines as DALI serializes them (pipeline/dali_pipeline.proto): made here, and by DALI
    itself where it is installed (CPU pipelines: DALI serializes GPU ones only with a GPU)."""
    s = lambda text: text.encode()  # noqa: E731

    def io(name, device="cpu", arg=None):
        return (field(1, 2, s(name)) + field(2, 2, s(device)) + field(3, 0, arg is not None) +
                (field(4, 2, s(arg)) if arg else b""))

    def arg(name, value):
        if isinstance(value, list):
            return field(4, 2, field(1, 2, s(name)) +
                         b"".join(field(7, 2, scalar("e", v)) for v in value) + field(8, 0, 1))
        return field(4, 2, scalar(name, value))

    def scalar(name, value):
        body = field(1, 2, s(name))
        if isinstance(value, bool):
            body += field(2, 2, b"bool") + field(6, 0, value)
        elif isinstance(value, int):
            body += field(2, 2, b"int64") + field(4, 0, value)
        elif isinstance(value, float):
            body += field(2, 2, b"float") + field(3, 5, struct.pack("<f", value))
        else:
            body += field(2, 2, b"string") + field(5, 2, s(value))
        return body + field(8, 0, 0)

    def op(schema, ins=(), outs=(), args=(), inst=None):
        body = field(1, 2, s(schema)) + b"".join(field(2, 2, i) for i in ins)
        body += b"".join(field(3, 2, o) for o in outs) + b"".join(args)
        return field(5, 2, body + (field(5, 2, s(inst)) if inst else b""))

    def pipe(ops, outs, device_id=-99999):
        return (field(1, 0, 2) + field(2, 0, 4) + b"".join(ops) +
                b"".join(field(7, 2, o) for o in outs) + field(8, 0, device_id) + field(9, 0, 3))

    es = op("ExternalSource", outs=[io("x")], args=[arg("dtype", 0), arg("ndim", 1)], inst="x")
    seeds = {
        "decode": pipe([es, op("decoders__Image", [io("x")], [io("d")], [arg("output_type", 0)]),
                        op("Resize", [io("d")], [io("r")], [arg("resize_x", 224.0),
                                                           arg("interp_type", 1)]),
                        op("random__CoinFlip", outs=[io("c")], args=[arg("probability", 0.5)]),
                        op("CropMirrorNormalize", [io("r"), io("c", arg="mirror")], [io("n")],
                           [arg("mean", [1.5, 2.5, 3.5]), arg("output_layout", "CHW")])],
                       [io("n"), io("c")]),
        "arith": pipe([es, op("_ArithmeticGenericOp", [io("x"), io("x")], [io("a")],
                              [arg("expression_desc", "clamp(add(&0 &1) $0:float32 $0:int32)"),
                               arg("real_constants", [0.5]), arg("integer_constants", [3])])],
                      [io("a")]),
        "subscript": pipe([es, op("_Shape", [io("x")], [io("s")]),
                           op("_TensorSubscript", [io("s")], [io("t")],
                              [arg("at_0", 1), arg("lo_1", 2), arg("num_subscripts", 2)])],
                          [io("t")]),
        "conditional": pipe([es, op("Cast", [io("x")], [io("p")], [arg("dtype", 11)]),
                             op("_conditional__Split", [io("x"), io("p", arg="predicate")],
                                [io("t"), io("f")], [arg("_if_stmt", True)]),
                             op("_conditional__Merge", [io("t"), io("f"),
                                                        io("p", arg="predicate")], [io("m")])],
                            [io("m")]),
        "gpu": pipe([op("ExternalSource", outs=[io("x", "gpu")], inst="x",
                        args=[arg("device", "gpu")]),
                     op("readers__File", outs=[io("j"), io("l")], args=[arg("file_root", "/d")]),
                     op("MakeContiguous", [io("l")], [io("lg", "gpu")], [arg("device", "mixed")]),
                     op("Cast", [io("x", "gpu")], [io("g", "gpu")], [arg("device", "gpu")])],
                    [io("g", "gpu"), io("lg", "gpu")], device_id=0),
    }
    for name, data in seeds.items():
        write(out / "dali_format", name, data)
    try:
        from nvidia.dali import fn, pipeline_def, types
    except Exception:  # noqa: BLE001 (DALI not installed, or broken: the made seeds do)
        return

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, enable_conditionals=True)
    def made_by_dali():
        x = fn.external_source(name="x", dtype=types.UINT8, ndim=1)
        img = fn.resize(fn.decoders.image(x), resize_x=64, resize_y=64)
        y = fn.cast(img, dtype=types.FLOAT) * 2 + 1
        if fn.random.coin_flip() > 0:
            z = y[0:4, :, 1]
        else:
            z = -y[4:8, :, 0]
        return z, img.shape()

    write(out / "dali_format", "made_by_dali", made_by_dali().serialize())


def main():
    testdata, out = Path(sys.argv[1]), Path(sys.argv[2])
    img = testdata / "images"

    def image_seed(name, data, png=False):
        prefixes = IMAGE_PREFIXES if len(data) <= SMALL_SEED else IMAGE_PREFIXES[:1]
        for k, pre in enumerate(prefixes):
            if png:  # half of them with the CRC fix-up on (p[5] bit 1), so mutations reach past the CRCs
                pre = pre[:5] + bytes([pre[5] | (2 if k % 2 == 0 else 0)])
            write(out / "image", f"{name}_{k}", pre + data)

    patterns = ["jpeg_edge/**/*.jpg", "orientation/*.jpg", "bmp/**/*", "pnm/**/*", "tiff/**/*",
                "webp/**/*", "jpeg2k/**/*"]
    shared = files(img, patterns) + files(testdata, ["fuzzing/jpeg/*", "fuzzing/bmp/*"])
    for i, f in enumerate(shared):
        if f.suffix in (".txt", ".md", ".npy") or f.name.startswith("LICENSE"):
            continue
        image_seed(f"{i:03d}_{f.name}", f.read_bytes())
    pngs = [(f.name, f.read_bytes()) for f in files(img, ["png/**/*.png", "jpeg_edge/reftest/**/*.png"])]
    pngs += [(n + ".png", d) for n, d in made_pngs().items()]
    for i, (name, data) in enumerate(pngs):
        image_seed(f"png{i:03d}_{name}", data, png=True)
    for name, data in pillow_images().items():
        image_seed(f"made_{name}", data)

    lists = [f.read_bytes() for f in files(testdata, ["fuzzing/*.txt", "coco/file_list.txt"])]
    lists += [b"a.jpg 0\nb c.jpg 12\n\n  d.png\t3  \r\n/abs/e.jpg 2147483647\n",
              b"only_a_path\n", b"x.jpg 2147483648\n", b"   \n\t\n", b"f.jpg 0"]
    for i, data in enumerate(lists):
        for opt in (0, 1, 3):
            write(out / "file_list", f"{i:02d}_{opt}", bytes([opt]) + data)

    rng = random.Random(11)
    for i in range(48):
        cfg = bytes(rng.randrange(256) for _ in range(6))
        mode = i % 3
        steps = rng.randrange(256)
        if mode == 2:
            body = bytes(rng.randrange(256) for _ in range(2 * rng.randrange(1, 4)))
        else:
            body = b"stoker.sample_order 1 cfg 10 0 1 1 0 1 7 524287 pos 1 0 1 0 0 0 -1 0 segs 1 0 1 buf 1 0"
        write(out / "sample_order", f"{i:02d}", cfg + bytes([mode, steps]) + body)

    tfrecord_seeds(testdata, out)
    recordio_seeds(testdata, out)
    tar_seeds(testdata, out)
    caffe_seeds(out)
    npy_seeds(out)
    fits_seeds(out)
    lmdb_seeds(out)
    dali_seeds(out)


if __name__ == "__main__":
    main()
