"""reshape, reinterpret, squeeze, expand_dims, shapes, get_property, copy, cast_like,
element_extract, per_frame and sequence_rearrange against NumPy and against DALI 2.4 on the same
inputs (outputs' values, shapes, dtypes and layouts), and their errors."""
import re
import numpy as np
import pytest

from _dali_ref import (both, dali_fails, error_checker, imagenet_images, real_dali, run,
                       stoker_error, stoker_lib, IMAGENET)
from stoker import fn, pipeline_def, types

A = [np.arange(24, dtype=np.uint8).reshape(2, 3, 4), np.arange(100, 112, dtype=np.uint8).reshape(1, 3, 4)]
SEQ = [np.arange(24, dtype=np.float32).reshape(4, 3, 2, 1), np.arange(12, dtype=np.float32).reshape(2, 3, 2, 1)]


check_error = error_checker(__file__)


# ---- reshape

@pytest.mark.parametrize("batch", [A[:1], A])
def test_reshape_shape_with_wildcard(batch):
    out = both(lambda fn, t, x: fn.reshape(x, shape=[4, -1]), [batch], ["HWC"])
    (samples, layout, dtype), = out
    assert layout == "" and dtype == "uint8"
    for s, a in zip(samples, batch):
        np.testing.assert_array_equal(s, a.reshape(4, -1))


def test_reshape_flat_and_same_ndim_keeps_layout():
    (s1, l1, _), (s2, l2, _) = both(
        lambda fn, t, x: (fn.reshape(x, shape=[-1]), fn.reshape(x, shape=[3, 2, -1])), [A[:1]], ["HWC"])
    np.testing.assert_array_equal(s1[0], A[0].ravel())
    np.testing.assert_array_equal(s2[0], A[0].reshape(3, 2, 4))
    assert (l1, l2) == ("", "HWC")


def test_reshape_rel_shape_rounds_and_adds_a_last_dimension():
    (r1, l1, _), (r2, l2, _), (r3, _, _) = both(
        lambda fn, t, x: (fn.reshape(x, rel_shape=[0.5, -1]), fn.reshape(x, rel_shape=[1, 1, 1, -1]),
                          fn.reshape(x, rel_shape=[1, -1])), [A], ["HWC"])
    # 0.5 * 1 rounds half away from zero, to 1.
    assert [s.shape for s in r1] == [(1, 24), (1, 12)]
    assert [s.shape for s in r2] == [(2, 3, 4, 1), (1, 3, 4, 1)]
    assert [s.shape for s in r3] == [(2, 12), (1, 12)]
    for s, a in zip(r1 + r2 + r3, A + A + A):
        np.testing.assert_array_equal(s.ravel(), a.ravel())
    assert l1 == "" and l2 == ""


def test_reshape_src_dims_with_rel_shape_and_layout():
    (r1, l1, _), (r2, l2, _) = both(
        lambda fn, t, x: (fn.reshape(x, src_dims=[2, 0], rel_shape=[1, -1]),
                          fn.reshape(x, src_dims=[0, 1, 2], layout="ABC")), [A], ["HWC"])
    assert [s.shape for s in r1] == [(4, 6), (4, 3)]
    assert l1 == "" and l2 == "ABC"
    for s, a in zip(r2, A):
        np.testing.assert_array_equal(s, a)


def test_reshape_src_dims_inserts_and_drops_unit_dimensions():
    batch = [np.arange(6, dtype=np.int16).reshape(2, 3, 1), np.arange(3, dtype=np.int16).reshape(1, 3, 1)]
    (s, layout, dtype), = both(lambda fn, t, x: fn.reshape(x, src_dims=[-1, 1, 0]), [batch], ["HWC"])
    assert [x.shape for x in s] == [(1, 3, 2), (1, 3, 1)]
    for x, a in zip(s, batch):
        np.testing.assert_array_equal(x, a.reshape(x.shape))  # a new shape, not a transposition
    # As many dimensions as the input: DALI keeps the input's layout.
    assert layout == "HWC" and dtype == "int16"


def test_reshape_src_dims_adding_a_dimension_clears_the_layout():
    # DALI 2.4 fails on this graph ("Unexpected layout of output 0. Got "", expected "HWC""):
    # its layout inference and its operator disagree. A 4-D output can't keep a 3-D layout.
    (s, layout, _), = run(stoker_lib(), lambda fn, t, x: fn.reshape(x, src_dims=[-1, 0, 1, 2]), [A], ["HWC"])
    assert [x.shape for x in s] == [(1, 2, 3, 4), (1, 1, 3, 4)]
    np.testing.assert_array_equal(s[1], A[1][None])
    assert layout == ""


def test_reshape_layout_only_and_clearing_it():
    (s1, l1, _), (s2, l2, _) = both(
        lambda fn, t, x: (fn.reshape(x, layout="XYZ"), fn.reshape(x, layout="")), [A], ["HWC"])
    assert (l1, l2) == ("XYZ", "")
    np.testing.assert_array_equal(s1[1], A[1])


def test_reshape_shape_per_sample_as_argument_and_as_input():
    shapes = [np.array([4, -1, 1], np.int32), np.array([-1, 2, 1], np.int32)]
    (s1, l1, _), (s2, l2, _) = both(
        lambda fn, t, x, sh: (fn.reshape(x, shape=sh), fn.reshape(x, sh)), [A, shapes], ["HWC", None])
    assert [x.shape for x in s1] == [(4, 6, 1), (6, 2, 1)] == [x.shape for x in s2]
    np.testing.assert_array_equal(s2[1], A[1].reshape(6, 2, 1))
    assert l1 == l2 == "HWC"


def test_reshape_shape_per_sample_changing_the_number_of_dimensions():
    # DALI 2.4 fails here ("Unexpected layout of output 0. Got "", expected "HWC""): it
    # expects the 3-D input's layout on a 2-D output.
    shapes = [np.array([4, -1], np.int32), np.array([-1, 2], np.int32)]
    (s1, l1, _), (s2, l2, _) = run(stoker_lib(), lambda fn, t, x, sh: (fn.reshape(x, shape=sh), fn.reshape(x, sh)),
                                   [A, shapes], ["HWC", None])
    assert [x.shape for x in s1] == [(4, 6), (6, 2)] == [x.shape for x in s2]
    np.testing.assert_array_equal(s1[0], A[0].reshape(4, 6))
    assert l1 == l2 == ""


def test_reshape_of_photos_shares_their_memory():
    imgs = imagenet_images(3)

    @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=1)
    def pipe():
        x = fn.external_source(source=lambda: imgs, batch=True, layout="HWC")
        return x, fn.reshape(x, rel_shape=[1, -1]), fn.squeeze(fn.expand_dims(x, axes=[0]), axes=[0])

    p = pipe()
    p.build()
    x, flat, same = p.run()
    for i, img in enumerate(imgs):
        h, w, c = img.shape
        np.testing.assert_array_equal(flat.at(i), img.reshape(h, w * c))
        np.testing.assert_array_equal(same.at(i), img)
        ptr = np.array(x.at(i), copy=False).__array_interface__["data"][0]
        assert np.array(flat.at(i), copy=False).__array_interface__["data"][0] == ptr
        assert np.array(same.at(i), copy=False).__array_interface__["data"][0] == ptr
    assert same.layout() == "" and flat.layout() == ""


def test_reshape_photos_like_dali():
    imgs = imagenet_images(4)
    (s1, l1, t1), (s2, l2, _) = both(
        lambda fn, t, x: (fn.reshape(x, src_dims=[1, 0, 2]), fn.reshape(x, rel_shape=[1, -1])), [imgs], ["HWC"])
    for x, y, img in zip(s1, s2, imgs):
        h, w, c = img.shape
        np.testing.assert_array_equal(x, img.reshape(w, h, c))
        np.testing.assert_array_equal(y, img.reshape(h, w * c))
    # The number of dimensions is unchanged, so the layout stays (DALI's rule).
    assert (l1, t1, l2) == ("HWC", "uint8", "")


def test_reshape_volume_mismatch_error():
    e = stoker_error(lambda fn, t, x: fn.reshape(x, shape=[6, 4]), [A], ["HWC"])
    check_error(e, "reshape", "argument 'shape' does not fit: sample 1 (shape (1, 3, 4)) has 12 elements "
                "(12 bytes), the requested shape (6, 4) has 24 (24 bytes). The number of bytes must stay "
                "the same: give a shape of the same volume, or -1 for the extent to compute.")
    dali_fails(lambda fn, t, x: fn.reshape(x, shape=[6, 4]), [A], ["HWC"])


@pytest.mark.parametrize("kwargs, rest", [
    (dict(shape=[-1, -1]), "argument 'shape' may have one negative extent (to be computed from the volume), got (-1, -1)."),
    (dict(shape=[0, -1]), "argument 'shape' must not have an extent of 0, got (0, -1)."),
    (dict(shape=[-1], rel_shape=[-1]), "the output shape is given both as 'shape' and as 'rel_shape'; give only one of them."),
    (dict(), "nothing to do: give a new shape ('shape', 'rel_shape', 'src_dims' or a shape input) or a 'layout'."),
    (dict(shape=[-1], layout="XY"), "argument 'layout' 'XY' has 2 dimensions, but the output has 1 (shape (24,)). "
                                    "Give a layout of 1 characters, or \"\" for none."),
    (dict(src_dims=[3]), "argument 'src_dims' [0] = 3 is out of range for sample 0 (shape (2, 3, 4)): give an "
                         "input dimension in [0, 2] or -1 for a new dimension of extent 1."),
    (dict(rel_shape=[1, 1, 1, 1]), "argument 'rel_shape' has 4 elements, more than the 3 dimensions of sample 0 "
                                   "(shape (2, 3, 4)). To add dimensions, map them with 'src_dims' (-1 for a new one)."),
    (dict(src_dims=[0, 1]), "argument 'src_dims' (0, 1) makes the shape (2, 3) of 6 elements from sample 0 (shape "
                            "(2, 3, 4)), which has 24. Only dimensions of extent 1 can be dropped."),
])
def test_reshape_argument_errors(kwargs, rest):
    e = stoker_error(lambda fn, t, x: fn.reshape(x, **kwargs), [A], ["HWC"])
    check_error(e, "reshape", rest)
    dali_fails(lambda fn, t, x: fn.reshape(x, **kwargs), [A], ["HWC"])


def test_reshape_float_shape_input_error():
    shapes = [np.array([-1], np.float32)] * 2
    e = stoker_error(lambda fn, t, x, s: fn.reshape(x, s), [A, shapes], ["HWC", None])
    check_error(e, "reshape", "the shape input (input 1) must hold integers, got float32. Cast it to an "
                              "integer type first.")
    dali_fails(lambda fn, t, x, s: fn.reshape(x, s), [A, shapes], ["HWC", None])


# ---- reinterpret

def test_reinterpret_dtype_adjusts_the_innermost_extent():
    b = [np.arange(6, dtype=np.int16).reshape(1, 3, 2), np.arange(6, dtype=np.int16).reshape(1, 2, 3)]
    (s1, l1, t1), (s2, l2, t2), (s3, l3, t3) = both(
        lambda fn, t, x, y: (fn.reinterpret(x, dtype=t.INT16), fn.reinterpret(y, dtype=t.UINT8),
                             fn.reinterpret(x, dtype=t.INT16, shape=[-1])), [A, b], ["HWC", "HWC"])
    for x, a in zip(s1, A):
        np.testing.assert_array_equal(x, a.view(np.int16))
    for x, a in zip(s2, b):
        np.testing.assert_array_equal(x, a.view(np.uint8))
    for x, a in zip(s3, A):
        np.testing.assert_array_equal(x, a.ravel().view(np.int16))
    assert (l1, t1, l2, t2, l3, t3) == ("HWC", "int16", "HWC", "uint8", "", "int16")


def test_reinterpret_errors():
    e = stoker_error(lambda fn, t, x: fn.reinterpret(x, dtype=t.INT64), [A], ["HWC"])
    check_error(e, "reinterpret", "argument 'dtype' cannot reinterpret sample 0 (shape (2, 3, 4)) of uint8 as "
                                  "int64: the innermost dimension holds 4 bytes, not a multiple of 8. Give a 'shape' too.")
    dali_fails(lambda fn, t, x: fn.reinterpret(x, dtype=t.INT64), [A], ["HWC"])
    e = stoker_error(lambda fn, t, x: fn.reinterpret(x), [A], ["HWC"])
    check_error(e, "reinterpret", "nothing to do: give a new shape ('shape', 'rel_shape', 'src_dims' or a shape "
                                  "input), a 'dtype' or a 'layout'.")
    e = stoker_error(lambda fn, t, x: fn.reinterpret(x, dtype=t.INT32, shape=[5, -1]), [A], ["HWC"])
    check_error(e, "reinterpret", "argument 'shape' does not fit: sample 0 (shape (2, 3, 4)) has 24 elements (24 "
                                  "bytes), the requested shape (5, 1) has 5 (20 bytes). The number of bytes must stay "
                                  "the same: give a shape of the same volume, or -1 for the extent to compute.")


# ---- squeeze and expand_dims

@pytest.mark.parametrize("bs", [1, 3])
def test_squeeze_axes_and_names(bs):
    b = [np.full((1, 3 + i, 1), i, np.int32) for i in range(bs)]
    (s1, l1, _), (s2, l2, _), (s3, l3, _) = both(
        lambda fn, t, x: (fn.squeeze(x, axes=[0]), fn.squeeze(x, axis_names="C"), fn.squeeze(x, axes=[2, 0])),
        [b], ["HWC"])
    for i, a in enumerate(b):
        np.testing.assert_array_equal(s1[i], a[0])
        np.testing.assert_array_equal(s2[i], a[:, :, 0])
        np.testing.assert_array_equal(s3[i], a[0, :, 0])
    assert (l1, l2, l3) == ("WC", "HW", "W")


def test_squeeze_to_0d_and_without_layout():
    (s1, l1, _), = both(lambda fn, t, x: fn.squeeze(x, axes=[0, 1]), [[np.full((1, 1), 5, np.uint8)]], ["HW"])
    assert s1[0].shape == () and s1[0] == 5 and l1 == ""
    (s2, l2, _), = both(lambda fn, t, x: fn.squeeze(x, axes=[0]), [[np.zeros((1, 3), np.uint8)]])
    assert s2[0].shape == (3,) and l2 == ""


def test_squeeze_negative_axes_count_from_the_back():
    # DALI 2.4 silently leaves the data as it is for a negative (or out-of-range) axis.
    (s, l, _), = run(stoker_lib(), lambda fn, t, x: fn.squeeze(x, axes=[-3]), [[np.zeros((1, 3, 4), np.uint8)]], ["HWC"])
    assert s[0].shape == (3, 4) and l == "WC"


@pytest.mark.parametrize("kwargs, shape, rest", [
    (dict(axes=[1]), (1, 3, 4), "argument 'axes' removes dimension 1 of sample 0 (shape (1, 3, 4)), whose extent "
                                "is 3, not 1; only dimensions of extent 1 can be removed."),
    (dict(axes=[3]), (1, 3, 4), "argument 'axes' has the axis 3, out of range for 3-D input: give axes in [-3, 2]."),
    (dict(axis_names="F"), (1, 3, 4), "argument 'axis_names' names the axis 'F', which the input layout \"HWC\" does not have."),
    (dict(), (1, 3, 4), "give the dimensions to remove as 'axes' or 'axis_names'."),
    (dict(axes=[0], axis_names="H"), (1, 3, 4), "give either 'axes' or 'axis_names', not both."),
    (dict(axes=[0, 0]), (1, 3, 4), "argument 'axes' names the axis 0 twice; give each axis once."),
    (dict(axes=[1]), (1, 0, 4), "argument 'axes' removes dimension 1 of sample 0 (shape (1, 0, 4)), whose extent "
                                "is 0, not 1; only dimensions of extent 1 can be removed."),
])
def test_squeeze_errors(kwargs, shape, rest):
    data = [[np.zeros(shape, np.uint8)]]
    e = stoker_error(lambda fn, t, x: fn.squeeze(x, **kwargs), data, ["HWC"])
    check_error(e, "squeeze", rest)
    if kwargs.get("axes") != [3]:
        dali_fails(lambda fn, t, x: fn.squeeze(x, **kwargs), data, ["HWC"])


@pytest.mark.parametrize("batch", [A[:1], A])
def test_expand_dims(batch):
    (s1, l1, _), (s2, l2, _), (s3, l3, _) = both(
        lambda fn, t, x: (fn.expand_dims(x, axes=[0]), fn.expand_dims(x, axes=[0, 4], new_axis_names="FX"),
                          fn.expand_dims(x, axes=[3, 0], new_axis_names="XF")), [batch], ["HWC"])
    for i, a in enumerate(batch):
        np.testing.assert_array_equal(s1[i], a[None])
        np.testing.assert_array_equal(s2[i], a[None, ..., None])
        np.testing.assert_array_equal(s3[i], a[None, :, :, None, :])
    assert (l1, l2, l3) == ("", "FHWCX", "FHWXC")


@pytest.mark.parametrize("kwargs, layout, rest", [
    (dict(axes=[-1]), "HWC", "argument 'axes' must not be negative, got (-1,); the axes are positions in the output."),
    (dict(axes=[5]), "HWC", "argument 'axes' has the axis 5, but the output has 4 dimensions (3 of the input and 1 new); "
                            "give axes in [0, 3]."),
    (dict(axes=[0], new_axis_names="AB"), "HWC", "argument 'new_axis_names' has 2 names for 1 new axes; give one name "
                                                 "per axis in 'axes'."),
    (dict(axes=[0, 0]), "HWC", "argument 'axes' has the axis 0 twice, got (0, 0)."),
    (dict(axes=[0], new_axis_names="F"), None, "argument 'new_axis_names' needs an input with a layout, and the input "
                                               "has none. Give the input a layout (or leave new_axis_names out)."),
])
def test_expand_dims_errors(kwargs, layout, rest):
    e = stoker_error(lambda fn, t, x: fn.expand_dims(x, **kwargs), [A], [layout])
    check_error(e, "expand_dims", rest)
    dali_fails(lambda fn, t, x: fn.expand_dims(x, **kwargs), [A], [layout])


# ---- shapes, get_property, copy, cast_like

def test_shapes_default_int64_and_other_types():
    b = A + [np.zeros((0, 5, 1), np.uint8)]
    (s1, l1, t1), (s2, _, t2), (s3, _, t3) = both(
        lambda fn, t, x: (fn.shapes(x), fn.shapes(x, dtype=t.INT32), fn.shapes(x, dtype=t.FLOAT)), [b], ["HWC"])
    for i, a in enumerate(b):
        for s in (s1, s2, s3):
            np.testing.assert_array_equal(s[i], np.array(a.shape))
    assert (l1, t1, t2, t3) == ("", "int64", "int32", "float32")


def test_shapes_of_0d_samples():
    # 0-d samples made by squeeze (external_source's own 0-d samples are another issue's).
    (s, _, t), = both(lambda fn, t, x: fn.shapes(fn.squeeze(x, axes=[0])),
                      [[np.array([3], np.float32), np.array([4], np.float32)]])
    assert [x.shape for x in s] == [(0,), (0,)] and t == "int64"


def test_shapes_dtype_error():
    e = stoker_error(lambda fn, t, x: fn.shapes(x, dtype=t.UINT8), [A], ["HWC"])
    check_error(e, "shapes", "argument 'dtype' must be one of int32, uint32, int64, uint64, float32 or float64, got uint8.")
    dali_fails(lambda fn, t, x: fn.shapes(x, dtype=t.UINT8), [A], ["HWC"])


def test_get_property_layout():
    (s1, l1, t1), = both(lambda fn, t, x: fn.get_property(x, key="layout"), [A], ["HWC"])
    assert [bytes(x) for x in s1] == [b"HWC", b"HWC"] and (l1, t1) == ("", "uint8")
    (s2, _, _), = both(lambda fn, t, x: fn.get_property(x, key="layout"), [A])
    assert [x.shape for x in s2] == [(0,), (0,)]


def _source_info_pipe(lib, files):
    fn_, _, pdef = lib

    @pdef(batch_size=len(files), num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn_.readers.file(files=[str(f) for f in files])
        return fn_.get_property(jpegs, key="source_info"), fn_.get_property(fn_.copy(jpegs), key="source_info")

    p = pipe()
    p.build()
    return [[bytes(np.array(o.at(i))) for i in range(len(o))] for o in p.run()]


def test_get_property_source_info_of_read_files():
    files = sorted(IMAGENET.rglob("*.jpg"))[:3]
    if len(files) < 3:
        pytest.skip("imagenet-sample not found")
    mine = _source_info_pipe(stoker_lib(), files)
    assert mine[0] == [str(f).encode() for f in files]
    assert mine[1] == mine[0]  # operators keep the sample's source
    try:
        ref = _source_info_pipe(real_dali(), files)
    except pytest.skip.Exception:
        return
    assert ref[0] == mine[0]


def test_get_property_key_error():
    with pytest.raises(ValueError) as e:
        run(stoker_lib(), lambda fn, t, x: fn.get_property(x, key="foo"), [A])
    assert re.fullmatch(r"fn\.get_property \(test_reshape\.py:\d+\): " + re.escape(
        "argument 'key' must be one of ['layout', 'source_info'], got 'foo'."), str(e.value))


@pytest.mark.parametrize("batch", [A[:1], A])
def test_copy_and_cast_like(batch):
    f = [a.astype(np.float32) * 1.25 + 0.1 for a in batch]  # no ties: rounding modes agree
    (c, lc, tc), (k1, l1, t1), (k2, l2, t2) = both(
        lambda fn, t, x, y: (fn.copy(x), fn.cast_like(x, y), fn.cast_like(y, x)), [batch, f], ["HWC", "XYZ"])
    for i, a in enumerate(batch):
        np.testing.assert_array_equal(c[i], a)
        np.testing.assert_array_equal(k1[i], a.astype(np.float32))
        np.testing.assert_array_equal(k2[i], np.clip(np.round(f[i]), 0, 255).astype(np.uint8))
    assert (lc, tc, l1, t1, l2, t2) == ("HWC", "uint8", "HWC", "float32", "XYZ", "uint8")


# ---- sequences: element_extract, per_frame, sequence_rearrange

@pytest.mark.parametrize("layout", ["FHWC", None])
def test_element_extract(layout):
    outs = both(lambda fn, t, x: fn.element_extract(x, element_map=[1, 0, 1]), [SEQ], [layout])
    assert len(outs) == 3
    for (s, l, t), e in zip(outs, [1, 0, 1]):
        for x, a in zip(s, SEQ):
            np.testing.assert_array_equal(x, a[e])
        assert l == ("HWC" if layout else "") and t == "float32"


@pytest.mark.parametrize("kwargs, data, layout, rest", [
    (dict(element_map=[2]), SEQ, "FHWC", "argument 'element_map' has the index 2, but sample 1 has 2 frames (shape (2, 3, 2, 1))."),
    (dict(element_map=[-1]), SEQ, "FHWC", "argument 'element_map' must not have negative indices, got (-1,)."),
    (dict(element_map=[0]), SEQ, "HWCN", "expects sequences (layout starting with 'F', frames first), got layout \"HWCN\". "
                                         "Mark the outer dimension as frames with fn.per_frame or fn.reshape(layout=...)."),
    (dict(element_map=[0]), [np.zeros(3, np.float32)], "F", "expects sequences of at least 2 dimensions (frames and the "
                                                             "elements), got shape (3,) for sample 0."),
])
def test_element_extract_errors(kwargs, data, layout, rest):
    e = stoker_error(lambda fn, t, x: fn.element_extract(x, **kwargs), [data], [layout])
    check_error(e, "element_extract", rest)
    dali_fails(lambda fn, t, x: fn.element_extract(x, **kwargs), [data], [layout])


def test_per_frame_layouts():
    (s1, l1, _), (s2, l2, _) = both(lambda fn, t, x, y: (fn.per_frame(x), fn.per_frame(y, replace=True)),
                                    [SEQ, SEQ], [None, "HWCN"])
    assert (l1, l2) == ("F***", "FWCN")
    np.testing.assert_array_equal(s1[0], SEQ[0])
    (s3, l3, _), = both(lambda fn, t, x: fn.per_frame(x), [SEQ], ["FHWC"])
    assert l3 == "FHWC"


def test_per_frame_errors():
    e = stoker_error(lambda fn, t, x: fn.per_frame(x), [SEQ], ["HWCN"])
    check_error(e, "per_frame", "the input layout \"HWCN\" does not start with 'F' (frames). Give replace=True to "
                                "make its first dimension the frames.")
    dali_fails(lambda fn, t, x: fn.per_frame(x), [SEQ], ["HWCN"])
    e = stoker_error(lambda fn, t, x: fn.per_frame(fn.squeeze(x, axes=[0])), [[np.array([1], np.float32)]])
    check_error(e, "per_frame", "cannot mark 0-D samples as sequences: a per-frame tensor needs an outer dimension "
                                "with one entry per frame.")
    dali_fails(lambda fn, t, x: fn.per_frame(fn.squeeze(x, axes=[0])), [[np.array([1], np.float32)]])


@pytest.mark.parametrize("layout", ["FHWC", None])
def test_sequence_rearrange_constant_and_per_sample(layout):
    orders = [np.array([3, 3, 0], np.int32), np.array([1], np.int32)]
    (s1, l1, _), (s2, l2, _) = both(
        lambda fn, t, x, o: (fn.sequence_rearrange(x, new_order=[1, 0, 1]), fn.sequence_rearrange(x, new_order=o)),
        [SEQ, orders], [layout, None])
    for i, a in enumerate(SEQ):
        np.testing.assert_array_equal(s1[i], a[[1, 0, 1]])
        np.testing.assert_array_equal(s2[i], a[orders[i]])
    assert l1 == l2 == (layout or "")


@pytest.mark.parametrize("order, layout, rest", [
    ([3], "FHWC", "argument 'new_order' [0] = 3 is not a frame of sample 1, which has 2 (shape (2, 3, 2, 1)): give "
                  "indices in [0, 1]."),
    ([-1], "FHWC", "argument 'new_order' [0] = -1 is not a frame of sample 0, which has 4 (shape (4, 3, 2, 1)): give "
                   "indices in [0, 3]."),
    ([], "FHWC", "argument 'new_order' is empty for sample 0; an output sequence needs at least one frame."),
    ([0], "HWCN", "expects sequences (layout starting with 'F', frames first), got layout \"HWCN\". Mark the outer "
                  "dimension as frames with fn.per_frame or fn.reshape(layout=...)."),
])
def test_sequence_rearrange_errors(order, layout, rest):
    e = stoker_error(lambda fn, t, x: fn.sequence_rearrange(x, new_order=order), [SEQ], [layout])
    check_error(e, "sequence_rearrange", rest)
    dali_fails(lambda fn, t, x: fn.sequence_rearrange(x, new_order=order), [SEQ], [layout])


def test_per_frame_argument_to_an_operator_that_takes_one_value_per_sample():
    # DALI's sequence operators take per-frame arguments; stoker's take one value per sample and
    # say so, instead of reading the frames' values as one list.
    flips = [np.array([1, 0, 1, 1], np.int32), np.array([0, 1], np.int32)]
    video = [(s * 10).astype(np.uint8) for s in SEQ]
    e = stoker_error(lambda fn, t, x, h: fn.flip(x, horizontal=fn.per_frame(h)), [video, flips], ["FHWC", None])
    check_error(e, "flip", "argument 'horizontal' was given per frame (fn.per_frame, layout \"F\"), but this "
                           "operator takes one value per sample, not per frame. Give it a per-sample tensor, "
                           "or apply it frame by frame.")


def test_reshape_rel_shape_per_sample():
    rel = [np.array([0.5, 2, 1], np.float32), np.array([1, 1, -1], np.float32)]
    (s, l, _), = both(lambda fn, t, x, r: fn.reshape(x, rel_shape=r), [A, rel], ["HWC", None])
    assert [x.shape for x in s] == [(1, 6, 4), (1, 3, 4)]
    np.testing.assert_array_equal(s[0], A[0].reshape(1, 6, 4))
    assert l == "HWC"


def test_ops_api_and_views_inside_a_decoding_pipeline():
    # Views between sample-wise operators, over several prefetched iterations: the decoded
    # images stay alive as long as the views of them.
    from stoker import ops
    files = sorted(IMAGENET.rglob("*.jpg"))[:4]
    if len(files) < 4:
        pytest.skip("imagenet-sample not found")
    reshape = ops.Reshape(layout="ABC")
    expand = ops.ExpandDims(axes=[0], new_axis_names="F")

    @pipeline_def(batch_size=2, num_threads=2, device_id=None, seed=1, prefetch_queue_depth=2)
    def pipe():
        jpegs, _ = fn.readers.file(files=[str(f) for f in files])
        img = fn.decoders.image(jpegs)
        seq = fn.per_frame(expand(img))
        frame = fn.element_extract(seq, element_map=[0])  # one index: one DataNode, as in DALI
        return img, reshape(fn.flip(frame, horizontal=1, vertical=0)), reshape(frame)

    p = pipe()
    p.build()
    for _ in range(4):
        img, flipped, same = p.run()
        assert flipped.layout() == "ABC" == same.layout()
        for i in range(2):
            np.testing.assert_array_equal(np.array(same.at(i)), np.array(img.at(i)))
            np.testing.assert_array_equal(np.array(flipped.at(i)), np.array(img.at(i))[:, ::-1])


def test_src_dims_and_squeeze_axes_per_sample():
    # DALI 2.4 declares both as tensor arguments but refuses them ("is no-op: arguments specify
    # neither new shape nor layout", "Missing argument ``axes``").
    src = [np.array([2, 1, 0], np.int32), np.array([1, 2, 0], np.int32)]
    axes = [np.array([0], np.int32), np.array([0], np.int32)]
    b = [np.zeros((1, 2, 3), np.uint8), np.ones((1, 4, 5), np.uint8)]
    (s1, l1, _), (s2, l2, _) = run(stoker_lib(), lambda fn, t, x, s, a: (fn.reshape(x, src_dims=s),
                                                                         fn.squeeze(x, axes=a)),
                                   [b, src, axes], ["HWC", None, None])
    assert [x.shape for x in s1] == [(3, 2, 1), (4, 5, 1)] and l1 == "HWC"
    assert [x.shape for x in s2] == [(2, 3), (4, 5)] and l2 == "WC"
    np.testing.assert_array_equal(s2[1], b[1][0])


def test_reshape_huge_extents_are_errors_not_crashes():
    e = stoker_error(lambda fn, t, x: fn.reshape(x, shape=[2 ** 40, 2 ** 40, -1]), [A], ["HWC"])
    assert str(e.value).startswith("fn.reshape (test_reshape.py:")
    shapes = [np.array([1e30, -1], np.float64)] * 2
    e = stoker_error(lambda fn, t, x, r: fn.reshape(x, rel_shape=r), [A, shapes], ["HWC", None])
    check_error(e, "reshape", "argument 'rel_shape' is [1e+30, -1] for sample 0: the extent 1e+30 is more "
                              "than any sample can have.")
