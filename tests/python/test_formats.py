"""TIFF, WebP, JPEG 2000, BMP and PNM through decoders.image (and the cropping decoders), and
peek_image_shape, against independent references on the shared test files: Pillow (which
decodes these formats with libtiff, libwebp and OpenJPEG itself), OpenCV for 16-bit samples,
and arrays written with tifffile/OpenCV for the TIFF and PNM layouts the shared files lack
(16-bit, tiled, planar, multi-channel)."""
import cv2
import numpy as np
import pytest
from PIL import Image, ImageOps

import stoker
from stoker import fn, pipeline_def, types

FORMATS = {  # name: (folder under images/, suffixes)
    "tiff": ("tiff", (".tiff", ".tif")),
    "webp": ("webp", (".webp",)),
    "jpeg2000": ("jpeg2k", (".jp2", ".j2k")),
    "bmp": ("bmp", (".bmp",)),
    "pnm": ("pnm", (".pnm", ".pbm", ".pgm", ".ppm")),
}
LIBRARY = {"tiff": "libtiff", "webp": "libwebp", "jpeg2000": "OpenJPEG"}


def files_of(testdata, fmt):
    folder, suffixes = FORMATS[fmt]
    return sorted(str(p) for p in (testdata / "images" / folder).rglob("*") if p.suffix in suffixes)


def decode(files, **kw):
    """decoders.image of each file, as a list of arrays (copies)."""
    @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=1)
    def pipe():
        j, _ = fn.readers.file(files=[str(f) for f in files])
        return fn.decoders.image(j, **kw)

    (out,) = pipe().run()
    assert out.layout() == "HWC"
    return [np.array(out[i]) for i in range(len(files))]


def peek_shapes(files, **kw):
    @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=1)
    def pipe():
        j, _ = fn.readers.file(files=[str(f) for f in files])
        return fn.peek_image_shape(j, **kw)

    (out,) = pipe().run()
    return out


_built = {}


def require(fmt, testdata):
    """Skips when this build has no library for `fmt`, after checking that decoding says so."""
    if fmt not in _built:
        f = files_of(testdata, fmt)[0]
        try:
            decode([f])
            _built[fmt] = True
        except NotImplementedError as e:
            assert f"stoker was built without {LIBRARY[fmt]}" in str(e) and "rebuild" in str(e), str(e)
            _built[fmt] = False
    if not _built[fmt]:
        pytest.skip(f"stoker was built without {LIBRARY[fmt]}")


def pil_channels(im):
    """The channels decoders.image gives with ANY_DATA for a file Pillow opened as `im`."""
    if im.mode == "P":
        pal = np.array(im.getpalette()).reshape(-1, 3)
        used = pal[np.unique(np.array(im))]
        return 1 if (used[:, 0] == used[:, 1]).all() and (used[:, 1] == used[:, 2]).all() else 3
    return {"1": 1, "L": 1, "I;16": 1, "I": 1, "LA": 2, "RGB": 3, "RGBA": 4}[im.mode]


def max_diff(a, b):
    assert a.shape == b.shape, (a.shape, b.shape)
    return int(np.abs(a.astype(np.int64) - b.astype(np.int64)).max())


# ---- every shared file against Pillow ---------------------------------------------------------

# Lossy files may round differently where the reference links another version of the library.
def tolerance(path):
    if "/webp/lossy/" in path or "/jpeg2k/1/" in path or "/jpeg2k/2/" in path:
        return 1
    return 0


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_decode_matches_pillow(testdata, fmt):
    require(fmt, testdata)
    # 16-bit JPEG 2000: Pillow wraps 65535 around to 0 in its 8-bit reduction; see the OpenCV test.
    files = [f for f in files_of(testdata, fmt) if "16bit" not in f]
    if fmt == "bmp":
        files += sorted(str(p) for p in (testdata / "fuzzing" / "bmp").glob("*.bmp"))  # 4-bit
    assert len(files) >= 10
    rgb = decode(files, output_type=types.RGB)
    bgr = decode(files, output_type=types.BGR)
    gray = decode(files, output_type=types.GRAY)
    anyd = decode(files, output_type=types.ANY_DATA)
    for i, f in enumerate(files):
        im = Image.open(f)
        tol = tolerance(f)
        assert max_diff(rgb[i], np.array(im.convert("RGB"))) <= tol, f
        assert np.array_equal(bgr[i], rgb[i][..., ::-1]), f
        assert max_diff(gray[i][..., 0], np.array(im.convert("L"))) <= tol, f
        c = pil_channels(im)
        assert anyd[i].shape == (im.height, im.width, c), f
        ref = np.array(im.convert({1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}[c])).reshape(anyd[i].shape)
        assert max_diff(anyd[i], ref) <= tol, f


def test_lossy_files_are_exact_where_the_library_matches(testdata):
    """With the same libwebp / OpenJPEG results the lossy files are exact, not just within 1."""
    require("webp", testdata)
    require("jpeg2000", testdata)
    files = sorted(str(p) for p in (testdata / "images" / "webp" / "lossy").glob("*.webp"))[:4]
    files += sorted(str(p) for p in (testdata / "images" / "jpeg2k").rglob("*.jp2") if "16bit" not in str(p))[:4]
    out = decode(files)
    exact = sum(np.array_equal(o, np.array(Image.open(f).convert("RGB"))) for o, f in zip(out, files))
    assert exact >= len(files) // 2, f"only {exact} of {len(files)} exact"


def test_uint16_output_of_8bit_files_is_scaled_by_257(testdata):
    files = [files_of(testdata, "bmp")[0], files_of(testdata, "pnm")[0]]
    u8, u16 = decode(files), decode(files, dtype=types.UINT16)
    for a, b in zip(u8, u16):
        assert b.dtype == np.uint16 and np.array_equal(b, a.astype(np.uint16) * 257)


def test_jpeg2000_16bit_matches_opencv(testdata):
    require("jpeg2000", testdata)
    files = [f for f in files_of(testdata, "jpeg2000") if "16bit" in f]
    assert files
    u16 = decode(files, dtype=types.UINT16)
    u8 = decode(files)
    for f, a16, a8 in zip(files, u16, u8):
        ref = cv2.imread(f, cv2.IMREAD_UNCHANGED)[..., ::-1]
        assert ref.dtype == np.uint16
        assert np.array_equal(a16, ref), f
        assert np.array_equal(a8, np.round(ref / 257.0).astype(np.uint8)), f


# ---- TIFF and PNM layouts made here ---------------------------------------------------------

def photo(testdata, h=None, w=None):
    im = np.array(Image.open(files_of(testdata, "bmp")[0]).convert("RGB"))
    return im[:h, :w]


def test_tiff_16bit_and_pnm_16bit_written_by_opencv(testdata, tmp_path):
    require("tiff", testdata)
    rgb = photo(testdata, 201, 333).astype(np.uint16) * 257 + np.arange(333, dtype=np.uint16)[None, :, None]
    gray = rgb[..., 1].copy()
    cases = [("rgb16.tiff", rgb[..., ::-1]), ("gray16.tiff", gray), ("gray16.pgm", gray), ("rgb16.ppm", rgb[..., ::-1])]
    files = []
    for name, arr in cases:
        files.append(str(tmp_path / name))
        assert cv2.imwrite(files[-1], arr)
    out = decode(files, dtype=types.UINT16, output_type=types.ANY_DATA)
    out8 = decode(files, output_type=types.ANY_DATA)
    for f, o, o8 in zip(files, out, out8):
        ref = cv2.imread(f, cv2.IMREAD_UNCHANGED)
        ref = ref[..., ::-1] if ref.ndim == 3 else ref[..., None]
        assert np.array_equal(o, ref), f
        assert np.array_equal(o8, np.round(ref / 257.0).astype(np.uint8)), f


@pytest.mark.parametrize("layout", [
    dict(tile=(64, 48), planarconfig="contig", dtype=np.uint16, channels=3, photometric="rgb"),
    dict(tile=(32, 32), planarconfig="separate", dtype=np.uint16, channels=7, photometric="minisblack"),
    dict(tile=None, planarconfig="separate", dtype=np.uint8, channels=4, photometric="rgb"),
    dict(tile=(16, 16), planarconfig="contig", dtype=np.uint8, channels=2, photometric="minisblack"),
    dict(tile=None, planarconfig="contig", dtype=np.uint16, channels=5, photometric="minisblack"),
])
@pytest.mark.parametrize("compression", [None, "zlib"])
def test_tiff_tiled_planar_multichannel(testdata, tmp_path, layout, compression):
    require("tiff", testdata)
    tifffile = pytest.importorskip("tifffile")
    h, w, c = 150, 173, layout["channels"]
    rng = np.random.default_rng(c)
    base = photo(testdata, h, w).astype(np.uint32)
    arr = np.concatenate([base, rng.integers(0, 256, (h, w, max(0, c - 3)))], axis=2)[..., :c]
    if layout["dtype"] == np.uint16:
        arr = arr * 257 + rng.integers(0, 257, arr.shape)
    arr = arr.astype(layout["dtype"])
    path = str(tmp_path / "t.tif")
    data = arr if layout["planarconfig"] == "contig" else np.moveaxis(arr, 2, 0)
    extra = {} if c in (1, 3) else {"extrasamples": [0] * (c - (3 if layout["photometric"] == "rgb" else 1))}
    tifffile.imwrite(path, data, tile=layout["tile"], planarconfig=layout["planarconfig"],
                     photometric=layout["photometric"], compression=compression, **extra)
    back = tifffile.imread(path)
    assert np.array_equal(back if layout["planarconfig"] == "contig" else np.moveaxis(back, 0, 2), arr)
    (any16,) = decode([path], dtype=types.UINT16, output_type=types.ANY_DATA)
    (any8,) = decode([path], output_type=types.ANY_DATA)
    (rgb,) = decode([path], output_type=types.RGB)
    wide = arr.astype(np.uint16) * 257 if arr.dtype == np.uint8 else arr
    assert any16.shape == (h, w, c) and np.array_equal(any16, wide)
    narrow = arr if arr.dtype == np.uint8 else np.round(arr / 257.0).astype(np.uint8)
    assert np.array_equal(any8, narrow)
    first3 = narrow[..., :3] if c >= 3 else np.repeat(narrow[..., :1], 3, axis=2)
    assert np.array_equal(rgb, first3)
    (shape,) = peek_shapes([path], image_type=types.ANY_DATA)
    assert list(shape) == [h, w, c]
    # The cropping decoders read only the tiles/strips of the window: the same pixels.
    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def pipe():
        j, _ = fn.readers.file(files=[path])
        return fn.decoders.image_slice(j, start=[33, 41], end=[120, 170], axes=[0, 1],
                                       output_type=types.ANY_DATA, dtype=types.UINT16)

    (s,) = pipe().run()
    assert np.array_equal(np.array(s[0]), wide[33:120, 41:170])


@pytest.mark.parametrize("mode,compression,tol", [
    ("RGB", "tiff_lzw", 0), ("RGB", "packbits", 0), ("RGB", "tiff_adobe_deflate", 0),
    ("RGB", "jpeg", 0), ("YCbCr", "jpeg", 0),  # JPEG-in-TIFF, also as YCbCr (libjpeg converts)
    ("YCbCr", "raw", 1),  # uncompressed YCbCr: libtiff's conversion, Pillow's rounds differently
    ("CMYK", "raw", 0), ("L", "tiff_lzw", 0), ("I;16", "raw", 0), ("LA", "tiff_adobe_deflate", 0),
])
def test_tiff_written_by_pillow(testdata, tmp_path, mode, compression, tol):
    require("tiff", testdata)
    src = Image.fromarray(photo(testdata, 201, 333))
    if mode == "I;16":
        src = Image.fromarray((np.array(src.convert("L")).astype(np.uint16) * 257 - np.arange(333, dtype=np.uint16)))
    elif mode == "LA":
        src = Image.merge("LA", [src.convert("L"), src.getchannel("R")])
    else:
        src = src.convert(mode)
    path = str(tmp_path / f"{mode}_{compression}.tiff")
    src.save(path, compression=compression)
    ref = Image.open(path)
    (rgb,) = decode([path])
    if mode == "I;16":  # Pillow's convert() clips 16-bit values at 255
        want = np.repeat(np.round(np.array(ref)[..., None] / 257.0).astype(np.uint8), 3, axis=2)
    else:
        want = np.array(ref.convert("RGB"))
    assert max_diff(rgb, want) <= tol
    (anyd,) = decode([path], output_type=types.ANY_DATA, dtype=types.UINT16)
    if mode == "I;16":
        assert np.array_equal(anyd[..., 0], np.array(ref))
    elif mode == "LA":
        assert np.array_equal(anyd, np.array(ref).astype(np.uint16) * 257)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def pipe():
        j, _ = fn.readers.file(files=[path])
        return fn.decoders.image_slice(j, start=[17, 29], end=[190, 301], axes=[0, 1])

    (s,) = pipe().run()
    assert np.array_equal(np.array(s[0]), rgb[17:190, 29:301])


def test_pnm_ascii_and_maxval(tmp_path):
    rng = np.random.default_rng(3)
    v = rng.integers(0, 1001, (5, 7, 3))
    body = "\n".join(" ".join(str(x) for x in row.ravel()) for row in v)
    p3 = tmp_path / "a.ppm"
    p3.write_text(f"P3\n# made by the test\n7 5\n1000\n{body}\n")
    p2 = tmp_path / "b.pgm"
    p2.write_text("P2 3 2 7\n0 1 2\n5 6 7\n")
    (a,) = decode([p3], output_type=types.ANY_DATA)
    assert np.array_equal(a, np.array(Image.open(p3)))  # Pillow scales by maxval, rounding
    (a16,) = decode([p3], output_type=types.ANY_DATA, dtype=types.UINT16)
    assert np.array_equal(a16, np.floor(v * 65535 / 1000 + 0.5).astype(np.uint16))
    (b,) = decode([p2], output_type=types.ANY_DATA)
    assert np.array_equal(b[..., 0], np.array(Image.open(p2)))


# ---- orientation -----------------------------------------------------------------------------

def test_tiff_orientation_tag(testdata, tmp_path):
    require("tiff", testdata)
    src = Image.fromarray(photo(testdata, 120, 170))
    files = []
    for o in range(1, 9):
        files.append(str(tmp_path / f"o{o}.tiff"))
        src.save(files[-1], tiffinfo={274: o})
    out = decode(files)
    raw = decode(files, adjust_orientation=False)
    shapes = peek_shapes(files)
    shapes_raw = peek_shapes(files, adjust_orientation=False)
    for i, f in enumerate(files):
        ref = np.array(ImageOps.exif_transpose(Image.open(f)).convert("RGB"))
        assert np.array_equal(out[i], ref), f
        assert np.array_equal(raw[i], np.array(src))
        assert list(shapes[i]) == list(ref.shape) and list(shapes_raw[i]) == [120, 170, 3]


# ---- the cropping decoders on every format ---------------------------------------------------

@pytest.mark.parametrize("fmt", list(FORMATS))
def test_crop_decoders_equal_decode_then_crop(testdata, fmt):
    require(fmt, testdata)
    files = files_of(testdata, fmt)[:6]
    fulls = decode(files)

    @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=9)
    def pipe():
        j, _ = fn.readers.file(files=files)
        return (fn.decoders.image_crop(j, crop=(97, 131), crop_pos_x=0.3, crop_pos_y=0.7),
                fn.decoders.image_slice(j, start=[10, 21], end=[90, 61], axes=[0, 1]),
                fn.decoders.image_random_crop(j))

    crops, slices, randoms = pipe().run()
    for i, f in enumerate(fulls):
        H, W = f.shape[:2]
        y = int(np.floor(np.float32(0.7) * np.float32(H - 97) + 0.5))
        x = int(np.floor(np.float32(0.3) * np.float32(W - 131) + 0.5))
        assert np.array_equal(crops[i], f[y:y + 97, x:x + 131]), files[i]
        assert np.array_equal(slices[i], f[10:90, 21:61]), files[i]
        r = np.array(randoms[i])
        # The random window is somewhere in the image: find where, then compare exactly.
        res = cv2.matchTemplate(f, r, cv2.TM_SQDIFF)
        y, x = np.unravel_index(np.argmin(res), res.shape)
        assert np.array_equal(r, f[y:y + r.shape[0], x:x + r.shape[1]]), files[i]


# ---- peek_image_shape --------------------------------------------------------------------------

def test_peek_image_shape_matches_pillow(testdata):
    files = []
    for fmt in FORMATS:
        if fmt in LIBRARY:
            try:
                require(fmt, testdata)
            except pytest.skip.Exception:
                continue
        files += files_of(testdata, fmt)
    files += sorted(str(p) for p in (testdata / "images" / "png" / "0").glob("*.png"))[:3]
    out = peek_shapes(files)
    assert out.dtype == types.INT64
    gray = peek_shapes(files, image_type=types.GRAY, dtype=types.INT32)
    anyd = peek_shapes(files, image_type=types.ANY_DATA, dtype=types.FLOAT)
    assert gray.dtype == types.INT32 and anyd.dtype == types.FLOAT
    for i, f in enumerate(files):
        im = Image.open(f)
        assert out[i].dtype == np.int64 and out[i].shape == (3,)
        assert list(out[i]) == [im.height, im.width, 3], f
        assert list(gray[i]) == [im.height, im.width, 1], f
        assert list(anyd[i]) == [im.height, im.width, pil_channels(im)], f


def test_peek_image_shape_exif_orientation(testdata):
    files = sorted(str(p) for p in (testdata / "images" / "exif").glob("*.jpg"))
    assert files
    adj, raw = peek_shapes(files), peek_shapes(files, adjust_orientation=False)
    for i, f in enumerate(files):
        im = Image.open(f)
        t = ImageOps.exif_transpose(im)
        assert list(adj[i]) == [t.height, t.width, 3], f
        assert list(raw[i]) == [im.height, im.width, 3], f


def test_peek_image_shape_errors(testdata, tmp_path):
    bad = tmp_path / "not_an_image.bmp"
    bad.write_bytes(b"hello, world: not an image at all")
    with pytest.raises(stoker.DecodeError, match=r"peek_image_shape.*not_an_image\.bmp.*unknown image format"):
        peek_shapes([bad])
    cut = tmp_path / "cut.bmp"
    cut.write_bytes(open(files_of(testdata, "bmp")[0], "rb").read()[:30])
    with pytest.raises(stoker.DecodeError, match=r"peek_image_shape.*cut\.bmp.*corrupt BMP.*truncated"):
        peek_shapes([cut])
    with pytest.raises(ValueError, match=r"peek_image_shape.*dtype"):
        peek_shapes(files_of(testdata, "bmp")[:1], dtype=types.UINT8)


# ---- bad files ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", list(FORMATS))
def test_truncated_and_corrupt_files_raise_decode_error(testdata, tmp_path, fmt):
    require(fmt, testdata)
    src = [f for f in files_of(testdata, fmt) if "16bit" not in f][0]
    data = open(src, "rb").read()
    cases = {"half": data[: len(data) // 2], "head": data[:20]}
    # Corrupt compressed data: libwebp notices. (Deflate TIFF strips and JPEG 2000 code-blocks
    # have no checksum that libtiff or OpenJPEG checks; they decode to garbage, in Pillow too.)
    if fmt == "webp":
        mid = bytearray(data)
        mid[len(mid) // 3: len(mid) // 3 + 3000] = bytes(3000)
        mid[len(mid) // 2: len(mid) // 2 + 3000] = b"\xff" * 3000
        cases["scrambled"] = bytes(mid)
    for name, blob in cases.items():
        p = tmp_path / f"{name}_{fmt}_sample{FORMATS[fmt][1][0]}"
        p.write_bytes(blob)
        with pytest.raises(stoker.DecodeError, match=rf"decoders\.image.*{p.name}") as e:
            decode([p])
        assert "truncated" in str(e.value) or "corrupt" in str(e.value), str(e.value)
        # The pipeline stays usable and on_error='skip' drops the file.
        @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
        def pipe():
            j, _ = fn.readers.file(files=[str(p), src])
            return fn.decoders.image(j, on_error="skip")

        (out,) = pipe().run()
        assert np.array_equal(np.array(out[0]), decode([src])[0])


def test_hostile_headers_are_refused_before_allocating(tmp_path):
    # A BMP and a PGM whose headers claim 60000x60000 pixels, in a few bytes.
    bmp = bytearray(b"BM" + bytes(12) + (40).to_bytes(4, "little") + (60000).to_bytes(4, "little") * 2
                    + (1).to_bytes(2, "little") + (24).to_bytes(2, "little") + bytes(24))
    (tmp_path / "huge.bmp").write_bytes(bytes(bmp))
    (tmp_path / "huge.pgm").write_bytes(b"P5\n60000 60000\n255\n\0\0\0")
    for name in ("huge.bmp", "huge.pgm"):
        with pytest.raises(stoker.DecodeError, match=rf"{name}.*60000x60000.*max_pixels"):
            decode([tmp_path / name])
        (shape,) = peek_shapes([tmp_path / name])  # peeking allocates nothing: allowed
        assert list(shape) == [60000, 60000, 3]
