"""readers.file and decoders.image against independent references (the file system, Pillow)."""
import collections
import math

import numpy as np
import pytest
from PIL import Image, ImageOps

import stoker
from stoker import fn, pipeline_def, types


def run_epoch_sources(pipe, n_batches):
    srcs = []
    for _ in range(n_batches):
        (data, labels) = pipe.run()[:2]
        srcs += [data.source_info(i) for i in range(len(data))]
    return srcs


def test_labels_follow_sorted_class_folders(jpeg_dir, jpeg_files):
    @pipeline_def(batch_size=len(jpeg_files), num_threads=2, device_id=None, seed=1)
    def pipe():
        return fn.readers.file(file_root=str(jpeg_dir), name="Reader")

    p = pipe()
    data, labels = p.run()
    assert labels.dtype == types.INT32
    assert labels.shape()[0] == (1,)
    got = [(data.source_info(i), int(labels[i][0])) for i in range(len(data))]
    assert got == jpeg_files
    # The bytes are the file's bytes.
    for i in (0, len(data) - 1):
        with open(jpeg_files[i][0], "rb") as f:
            assert data[i].tobytes() == f.read()
    assert p.epoch_size("Reader") == len(jpeg_files)
    meta = p.reader_meta("Reader")
    assert meta["epoch_size"] == len(jpeg_files) and meta["number_of_shards"] == 1


@pytest.mark.parametrize("num_shards", [1, 2, 3, 5])
@pytest.mark.parametrize("shuffle", [False, True])
def test_every_sample_once_per_epoch_per_shard(jpeg_dir, jpeg_files, num_shards, shuffle):
    n = len(jpeg_files)
    all_seen = []
    for shard_id in range(num_shards):
        expected = math.floor((shard_id + 1) * n / num_shards) - math.floor(shard_id * n / num_shards)

        @pipeline_def(batch_size=expected, num_threads=2, device_id=None, seed=7)
        def pipe():
            return fn.readers.file(file_root=str(jpeg_dir), shard_id=shard_id, num_shards=num_shards,
                                   random_shuffle=shuffle, initial_fill=16, stick_to_shard=True,
                                   name="Reader")

        p = pipe()
        srcs = run_epoch_sources(p, 1)
        assert len(set(srcs)) == expected, "a sample repeated within the shard's epoch"
        # Next epoch: the same shard (stick_to_shard), every sample once again.
        assert sorted(run_epoch_sources(p, 1)) == sorted(srcs)
        all_seen += srcs
    assert sorted(all_seen) == sorted(p for p, _ in jpeg_files)


def test_shard_rotation_and_padding(jpeg_dir, jpeg_files):
    n, shards, bs = len(jpeg_files), 3, 4
    sizes = [math.floor((i + 1) * n / shards) - math.floor(i * n / shards) for i in range(shards)]

    @pipeline_def(batch_size=bs, num_threads=1, device_id=None, seed=3)
    def pipe():
        return fn.readers.file(file_root=str(jpeg_dir), shard_id=0, num_shards=shards,
                               pad_last_batch=True, name="Reader")

    p = pipe()
    order = [p for p, _ in jpeg_files]
    start = 0
    for epoch in range(shards):  # without stick_to_shard the reader moves to the next shard
        shard = epoch % shards
        begin = math.floor(shard * n / shards)
        batches = math.ceil(math.ceil(n / shards) / bs)
        srcs = run_epoch_sources(p, batches)
        real = order[begin:begin + sizes[shard]]
        assert srcs[:len(real)] == real
        assert all(s == real[-1] for s in srcs[len(real):]), "padding repeats the last sample"
    meta = p.reader_meta("Reader")
    assert meta["pad_last_batch"] and meta["epoch_size"] == n
    assert meta["epoch_size_padded"] == math.ceil(n / shards) * shards


def test_without_padding_the_last_batch_wraps_around(jpeg_dir, jpeg_files):
    n, bs = len(jpeg_files), 10

    @pipeline_def(batch_size=bs, num_threads=1, device_id=None, seed=3)
    def pipe():
        return fn.readers.file(file_root=str(jpeg_dir))

    srcs = run_epoch_sources(pipe(), math.ceil(n / bs))
    order = [p for p, _ in jpeg_files]
    assert srcs[:n] == order and srcs[n:] == order[: len(srcs) - n]


def test_file_list_and_files(tmp_path, jpeg_files):
    lst = tmp_path / "list.txt"
    lst.write_text("".join(f"{p} {7 + i}\n" for i, (p, _) in enumerate(jpeg_files[:5])))

    @pipeline_def(batch_size=5, num_threads=1, device_id=None, seed=1)
    def by_list():
        return fn.readers.file(file_list=str(lst))

    data, labels = by_list().run()
    assert [int(labels[i][0]) for i in range(5)] == [7, 8, 9, 10, 11]
    assert [data.source_info(i) for i in range(5)] == [p for p, _ in jpeg_files[:5]]

    @pipeline_def(batch_size=3, num_threads=1, device_id=None, seed=1)
    def by_files():
        return fn.readers.file(files=[p for p, _ in jpeg_files[:3]], labels=[4, 5, 6])

    data, labels = by_files().run()
    assert labels.as_array().ravel().tolist() == [4, 5, 6]


def pil_reference(path, mode="RGB"):
    with Image.open(path) as im:
        im = ImageOps.exif_transpose(im)
        return np.asarray(im.convert(mode))


def test_decoded_pixels_equal_pillow(jpeg_files):
    # Both use libjpeg-turbo with the accurate integer IDCT and fancy upsampling.
    files = [p for p, _ in jpeg_files]

    @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(files=files)
        return fn.decoders.image(jpegs, output_type=types.RGB)

    (images,) = pipe().run()
    assert images.layout() == "HWC" and images.dtype == types.UINT8
    worst = 0
    for i, f in enumerate(files):
        ref = pil_reference(f)
        assert images[i].shape == ref.shape, f
        worst = max(worst, int(np.abs(images[i].astype(int) - ref).max()))
    assert worst == 0, f"max abs difference to Pillow: {worst}"


@pytest.mark.parametrize("output_type,mode,channels", [(types.GRAY, "L", 1), (types.BGR, "RGB", 3)])
def test_decoder_color_outputs(jpeg_files, output_type, mode, channels):
    f = jpeg_files[0][0]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(files=[f])
        return fn.decoders.image(jpegs, output_type=output_type)

    (img,) = pipe().run()
    ref = pil_reference(f, mode)
    if output_type == types.BGR:
        ref = ref[..., ::-1]
    else:
        ref = ref[..., None]
    assert img[0].shape[2] == channels
    assert np.abs(img[0].astype(int) - ref).max() <= 1


def test_exif_orientation_is_applied(testdata):
    exif = sorted((testdata / "images" / "exif").glob("Landscape_*.jpg"))
    assert exif, "no EXIF test images"
    files = [str(p) for p in exif]

    @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(files=files)
        return fn.decoders.image(jpegs)

    (images,) = pipe().run()
    for i, f in enumerate(files):
        ref = pil_reference(f)
        assert images[i].shape == ref.shape, f
        assert np.abs(images[i].astype(int) - ref).mean() < 1.0, f


def _paths_pipeline(module, paths, **kwargs):
    @module.pipeline_def(batch_size=len(paths), num_threads=2, device_id=None)
    def pipe():
        encoded = [np.frombuffer(p.encode("utf-8"), dtype=np.uint8) for p in paths]
        names = module.fn.external_source(source=lambda: encoded, batch=True)
        return module.fn.io.file.read(names, **kwargs)

    p = pipe()
    p.build()
    return p


def test_io_file_read_gives_the_files_bytes(tmp_path, jpeg_files):
    other = tmp_path / "ü n.bin"  # a non-ASCII name, a space, and an empty file
    other.write_bytes(b"")
    paths = [jpeg_files[0][0], str(other), jpeg_files[-1][0]]
    (data,) = _paths_pipeline(stoker, paths).run()
    assert data.dtype == types.UINT8 and data.layout() == ""
    for i, path in enumerate(paths):
        with open(path, "rb") as f:
            assert data[i].tobytes() == f.read()
        assert data.source_info(i) == path
    # int8 paths, as DALI takes them too.
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def signed():
        name = np.frombuffer(paths[0].encode(), dtype=np.int8)
        return fn.io.file.read(fn.external_source(source=lambda: [name], batch=True))

    (data,) = signed().run()
    with open(paths[0], "rb") as f:
        assert data[0].tobytes() == f.read()


def test_io_file_read_equals_dali(jpeg_files):
    dali = pytest.importorskip("nvidia.dali")
    paths = [f for f, _ in jpeg_files[:4]]
    (ours,) = _paths_pipeline(stoker, paths).run()
    (theirs,) = _paths_pipeline(dali, paths).run()
    for i in range(len(paths)):
        assert ours[i].tobytes() == np.array(theirs[i]).tobytes()


def test_io_file_read_errors_name_the_file_and_the_argument(tmp_path):
    missing = str(tmp_path / "nowhere.jpg")
    with pytest.raises(FileNotFoundError, match=r"fn\.io\.file\.read .*sample 0: file '.*nowhere\.jpg' does not exist"):
        _paths_pipeline(stoker, [missing]).run()
    with pytest.raises(ValueError, match="use_o_direct.*dont_use_mmap=True"):
        _paths_pipeline(stoker, [missing], use_o_direct=True)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def wide():
        return fn.io.file.read(fn.external_source(source=lambda: [np.zeros(4, np.int32)], batch=True))

    with pytest.raises(ValueError, match="filepaths.*uint8 or int8.*np.frombuffer"):
        wide().run()
