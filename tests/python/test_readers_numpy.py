"""readers.numpy against NumPy itself: arrays written with np.save, read whole and by region of
interest (compared with NumPy slicing), in every dtype, C and Fortran order, both byte orders."""
import math
import os

import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def, types


def make_pipe(batch_size, outputs=None, **kw):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=4)
    def pipe():
        data = fn.readers.numpy(name="Reader", **kw)
        return (data,) + tuple(f() for f in (outputs or []))

    return pipe()


def save(path, arr, fortran=False):
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, np.asfortranarray(arr) if fortran else arr)
    return str(path)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", ">u2", "int32", ">i4",
                                   "uint32", "int64", "uint64", "float16", "float32", ">f4",
                                   "float64"])
@pytest.mark.parametrize("fortran", [False, True])
def test_whole_arrays_every_dtype(tmp_path, dtype, fortran):
    rng = np.random.default_rng(1)
    arrays = []
    for k, shape in enumerate([(3, 5, 2), (1, 7, 1), (4, 1, 3)]):
        a = (rng.random(shape) * 100 - 20).astype(dtype)
        arrays.append(a)
        save(tmp_path / f"a{k}.npy", a, fortran)
    (data,) = make_pipe(3, file_root=str(tmp_path)).run()
    assert data.dtype == types.from_numpy_dtype(np.dtype(dtype).newbyteorder("="))
    for i, a in enumerate(arrays):
        np.testing.assert_array_equal(data[i], a)
        assert data.source_info(i) == str(tmp_path / f"a{i}.npy")


def test_scalar_and_empty_arrays(tmp_path):
    save(tmp_path / "s.npy", np.array(3.5, np.float32))
    (d,) = make_pipe(1, files=[str(tmp_path / "s.npy")]).run()
    assert d[0].shape == () and d[0] == 3.5
    save(tmp_path / "e.npy", np.zeros((0, 4), np.int32))
    (d,) = make_pipe(1, files=["e.npy"], file_root=str(tmp_path)).run()
    assert d[0].shape == (0, 4)


def test_file_root_filter_files_and_file_list(tmp_path):
    a = {name: np.full((2, 2), k, np.int16) for k, name in enumerate(["x/1.npy", "x/2.npy", "y/3.npy", "z.npy"])}
    for name, arr in a.items():
        save(tmp_path / name, arr)
    (tmp_path / "notes.txt").write_text("not an array")
    (d,) = make_pipe(4, file_root=str(tmp_path)).run()
    assert [int(d[i][0, 0]) for i in range(4)] == [0, 1, 2, 3]  # sorted relative paths
    (d,) = make_pipe(2, file_root=str(tmp_path), file_filter="x/*.npy").run()
    assert [d.source_info(i) for i in range(2)] == [str(tmp_path / "x/1.npy"), str(tmp_path / "x/2.npy")]
    lst = tmp_path / "list.txt"
    lst.write_text("y/3.npy\n\n  x/1.npy  \n")
    (d,) = make_pipe(2, file_list=str(lst)).run()
    assert [int(d[i][0, 0]) for i in range(2)] == [2, 0]
    with pytest.raises(ValueError, match="'file_root' .*has no files matching file_filter '\\*.png'"):
        make_pipe(1, file_root=str(tmp_path), file_filter="*.png").build()
    with pytest.raises(ValueError, match="cannot both be given"):
        make_pipe(1, files=["z.npy"], file_list=str(lst)).build()


def roi_slices(shape, axes, start=None, end=None, rel_start=None, rel_end=None, rshape=None,
               rel_shape=None):
    """The reader's rule: start and end as real numbers (end = start + shape where a shape is
    given), each rounded half away from zero."""
    rnd = lambda x: math.floor(x + 0.5)  # noqa: E731 (all values here are >= 0)
    sl = [slice(None)] * len(shape)
    for k, a in enumerate(axes):
        s = 0.0
        if start is not None:
            s = float(start[k])
        if rel_start is not None:
            s = float(rel_start[k]) * shape[a]
        e = float(shape[a])
        if end is not None:
            e = float(end[k])
        if rel_end is not None:
            e = float(rel_end[k]) * shape[a]
        if rshape is not None:
            e = s + float(rshape[k])
        if rel_shape is not None:
            e = s + float(rel_shape[k]) * shape[a]
        sl[a] = slice(rnd(s), rnd(e))
    return tuple(sl)


@pytest.mark.parametrize("fortran", [False, True])
@pytest.mark.parametrize("case", [
    dict(roi_start=[1, 2, 0], roi_end=[4, 5, 3]),
    dict(roi_axes=[1], roi_start=[3], roi_shape=[2]),
    dict(roi_axes=[2], roi_start=[1], roi_end=[2]),        # the innermost axis only
    dict(roi_axes=[0], roi_start=[2], roi_end=[3]),        # whole rows: one contiguous read
    dict(roi_axes=[-1, 0], rel_roi_start=[0.25, 0.5], rel_roi_end=[0.75, 1.0]),
    dict(rel_roi_start=[0.1, 0.2, 0.0], rel_roi_shape=[0.5, 0.4, 1.0]),
])
def test_roi_matches_numpy_slicing(tmp_path, fortran, case):
    rng = np.random.default_rng(2)
    arrays = [rng.integers(0, 1000, (6, 8, 4)).astype(np.int32),
              rng.integers(0, 1000, (5, 9, 4)).astype(np.int32)]
    files = [save(tmp_path / f"r{i}.npy", a, fortran) for i, a in enumerate(arrays)]
    (d,) = make_pipe(2, files=files, **case).run()
    axes = case.get("roi_axes", [0, 1, 2])
    axes = [a % 3 for a in axes]
    for i, a in enumerate(arrays):
        sl = roi_slices(a.shape, axes, case.get("roi_start"), case.get("roi_end"),
                        case.get("rel_roi_start"), case.get("rel_roi_end"), case.get("roi_shape"),
                        case.get("rel_roi_shape"))
        np.testing.assert_array_equal(d[i], a[sl])


def test_per_sample_roi_from_another_operator(tmp_path):
    rng = np.random.default_rng(3)
    arrays = [rng.random((10, 12)).astype(np.float32) for _ in range(4)]
    files = [save(tmp_path / f"t{i}.npy", a) for i, a in enumerate(arrays)]

    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=9)
    def pipe():
        start = fn.random.uniform(shape=[2], range=[0.0, 0.5])
        return fn.readers.numpy(files=files, rel_roi_start=start, rel_roi_shape=[0.5, 0.5]), start

    d, start = pipe().run()
    for i, a in enumerate(arrays):
        st = start[i]
        sl = roi_slices(a.shape, [0, 1], rel_start=st, rel_shape=[0.5, 0.5])
        np.testing.assert_array_equal(d[i], a[sl])


def test_out_of_bounds_policies(tmp_path):
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    f = save(tmp_path / "o.npy", a)
    with pytest.raises(ValueError, match=r"region of interest \[-1, 3\) on axis 0 lies outside '.*o.npy' "
                                         r"\(shape \(4, 5\)\).*out_of_bounds_policy"):
        make_pipe(1, files=[f], roi_start=[-1, 1], roi_end=[3, 7]).run()
    (d,) = make_pipe(1, files=[f], roi_start=[-1, 1], roi_end=[3, 7],
                     out_of_bounds_policy="trim_to_shape").run()
    np.testing.assert_array_equal(d[0], a[0:3, 1:5])
    (d,) = make_pipe(1, files=[f], roi_start=[-1, 1], roi_end=[3, 7], out_of_bounds_policy="pad",
                     fill_value=-7).run()
    expected = np.full((4, 6), -7, np.float32)
    expected[1:, :4] = a[0:3, 1:5]
    np.testing.assert_array_equal(d[0], expected)
    # Entirely outside: all padding.
    (d,) = make_pipe(1, files=[f], roi_axes=[1], roi_start=[6], roi_end=[8],
                     out_of_bounds_policy="pad", fill_value=2).run()
    np.testing.assert_array_equal(d[0], np.full((4, 2), 2, np.float32))
    with pytest.raises(ValueError, match="ends before it starts"):
        make_pipe(1, files=[f], roi_start=[3, 0], roi_end=[1, 5]).run()
    with pytest.raises(ValueError, match="has 1 values for 2 axes"):
        make_pipe(1, files=[f], roi_start=[1]).run()


def test_roi_reads_only_the_region(tmp_path):
    # A 1 GiB array (sparse on disk): reading a 4x4 region reads a few rows, not the file.
    path = tmp_path / "big.npy"
    big = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(16384, 16384))
    big[100:104, 200:204] = np.arange(16, dtype=np.float32).reshape(4, 4)
    del big
    pipe = make_pipe(1, files=[str(path)], roi_start=[100, 200], roi_shape=[4, 4])
    pipe.build()

    def rchar():
        for line in open("/proc/self/io"):
            if line.startswith("rchar:"):
                return int(line.split()[1])

    before = rchar()
    (d,) = pipe.run()
    read = rchar() - before
    np.testing.assert_array_equal(d[0], np.arange(16, dtype=np.float32).reshape(4, 4))
    assert read < 4 << 20, f"read {read} bytes for a 64-byte region"
    assert pipe.memory_stats()["host"]["peak_allocated"] < 1 << 20


@pytest.mark.parametrize("num_shards", [1, 3])
@pytest.mark.parametrize("shuffle", [False, True])
def test_every_file_once_per_epoch_per_shard(tmp_path, num_shards, shuffle):
    n = 13
    for k in range(n):
        save(tmp_path / f"{k:02d}.npy", np.array([k], np.int64))
    seen = []
    for shard in range(num_shards):
        size = math.floor((shard + 1) * n / num_shards) - math.floor(shard * n / num_shards)
        p = make_pipe(size, file_root=str(tmp_path), shard_id=shard, num_shards=num_shards,
                      random_shuffle=shuffle, initial_fill=4, stick_to_shard=True)
        first = [int(x) for x in p.run()[0].as_array().ravel()]
        assert len(set(first)) == size
        assert sorted(int(x) for x in p.run()[0].as_array().ravel()) == sorted(first)
        seen += first
    assert sorted(seen) == list(range(n))


def test_errors_name_the_file(tmp_path):
    save(tmp_path / "good.npy", np.zeros((2, 2), np.float32))
    (tmp_path / "junk.npy").write_bytes(b"not numpy at all")
    with pytest.raises(stoker.DecodeError, match=r"junk.npy' is not a valid .npy file: it does not start"):
        make_pipe(2, file_root=str(tmp_path)).run()
    raw = open(tmp_path / "good.npy", "rb").read()
    (tmp_path / "junk.npy").write_bytes(raw[:-3])
    with pytest.raises(stoker.DecodeError, match=r"junk.npy' is truncated: an array of shape \(2, 2\) "
                                                 r"and dtype '<f4' needs 16 bytes"):
        make_pipe(2, file_root=str(tmp_path)).run()
    save(tmp_path / "junk.npy", np.zeros((2, 2), np.complex64))
    with pytest.raises(NotImplementedError, match=r"junk.npy' holds elements of NumPy dtype '<c8'"):
        make_pipe(2, file_root=str(tmp_path)).run()
    save(tmp_path / "junk.npy", np.zeros((2, 2), np.float64))
    with pytest.raises(ValueError, match="one dtype and one number of dimensions"):
        make_pipe(2, file_root=str(tmp_path)).run()
    # on_error='skip' leaves the bad file out.
    (tmp_path / "junk.npy").write_bytes(b"garbage")
    pipe = make_pipe(2, file_root=str(tmp_path), on_error="skip")
    (d,) = pipe.run()
    assert [d.source_info(i) for i in range(2)] == [str(tmp_path / "good.npy")] * 2
    assert list(pipe.error_stats().values())[0]["skipped"] == 1
