"""cat, stack, permute_batch and batch_permutation against NumPy and against DALI 2.4 on the
same inputs (values, shapes, dtypes, layouts), and their errors."""
import numpy as np
import pytest

from _dali_ref import (both, dali_fails, error_checker, imagenet_images, real_dali, run,
                       stoker_error, stoker_lib)
from stoker import fn, pipeline_def

A = [np.arange(6, dtype=np.uint8).reshape(2, 3), np.arange(4, dtype=np.uint8).reshape(2, 2)]
B = [np.arange(10, 14, dtype=np.uint8).reshape(2, 2), np.arange(10, 12, dtype=np.uint8).reshape(2, 1)]


check_error = error_checker(__file__)


# ---- cat

@pytest.mark.parametrize("n", [1, 2])
def test_cat_axes(n):
    a, b = A[:n], B[:n]
    outs = both(lambda fn, t, x, y: (fn.cat(x, y, axis=1), fn.cat(x, y, axis=-1), fn.cat(x, y, axis_name="W"),
                                     fn.cat(x)), [a, b], ["HW", "HW"])
    for s, l, t in outs[:3]:
        for i in range(n):
            np.testing.assert_array_equal(s[i], np.concatenate([a[i], b[i]], axis=1))
        assert (l, t) == ("HW", "uint8")
    np.testing.assert_array_equal(outs[3][0][0], a[0])


def test_cat_three_inputs_axis0_takes_input0s_layout():
    c = [x.T.copy() for x in B]
    x3 = [np.ones((1, 2), np.uint8) * 7, np.ones((3, 2), np.uint8) * 9]
    (s, l, _), = both(lambda fn, t, x, y, z: fn.cat(x, y, z, axis=0), [[b.T.copy() for b in B], c, x3],
                      [None, "HW", None])
    for i in range(2):
        np.testing.assert_array_equal(s[i], np.concatenate([B[i].T, c[i], x3[i]], axis=0))
    assert l == ""  # input 0's layout, as in DALI


def test_cat_photos_along_channels():
    imgs = imagenet_images(3)
    (s, l, t), = both(lambda fn, t, x, y: fn.cat(x, y, axis=2), [imgs, [i[::-1].copy() for i in imgs]],
                      ["HWC", "HWC"])
    for x, img in zip(s, imgs):
        np.testing.assert_array_equal(x, np.concatenate([img, img[::-1]], axis=2))
    assert (l, t) == ("HWC", "uint8")


@pytest.mark.parametrize("kwargs, datas, layouts, rest", [
    (dict(axis=0), [A, B], ["HW", "HW"], "joined samples may differ only in the axis 0, but sample 0 of input 0 has "
                                         "shape (2, 3) and of input 1 (2, 2)."),
    (dict(axis=2), [A, B], ["HW", "HW"], "argument 'axis' is 2, out of range for 2-D inputs: give an axis in [-2, 1] "
                                         "(negative ones count from the back)."),
    (dict(axis_name="C"), [A, B], ["HW", "HW"], "argument 'axis_name' is 'C', which is not an axis of the input layout \"HW\"."),
    (dict(axis_name="W"), [A, B], [None, None], "argument 'axis_name' is 'W', which is not an axis of the input layout \"\"."),
    (dict(axis=1), [A, [b.astype(np.int16) for b in B]], ["HW", "HW"],
     "all inputs must have the same element type and number of dimensions; input 0 is uint8, 2-D and input 1 is int16, 2-D."),
    (dict(axis=0), [A, [b.ravel() for b in B]], ["HW", None],
     "all inputs must have the same element type and number of dimensions; input 0 is uint8, 2-D and input 1 is uint8, 1-D."),
    (dict(axis=1, axis_name="W"), [A, B], ["HW", "HW"], "give either 'axis' or 'axis_name', not both."),
])
def test_cat_errors(kwargs, datas, layouts, rest):
    e = stoker_error(lambda fn, t, *xs: fn.cat(*xs, **kwargs), datas, layouts)
    check_error(e, "cat", rest)
    dali_fails(lambda fn, t, *xs: fn.cat(*xs, **kwargs), datas, layouts)


def test_cat_axis_name_needs_agreeing_layouts():
    # DALI 2.4 joins "HW" with "WH" by name without a word; the name means different axes.
    e = stoker_error(lambda fn, t, x, y: fn.cat(x, y, axis_name="W"), [A, [a.copy() for a in A]], ["HW", "WH"])
    check_error(e, "cat", "argument 'axis_name' needs the inputs' layouts to agree, but input 1 has \"WH\" and an "
                          "earlier one \"HW\".")


# ---- stack

@pytest.mark.parametrize("n", [1, 2])
def test_stack_axes(n):
    a = A[:n]
    c = [x + 100 for x in a]
    outs = both(lambda fn, t, x, y: (fn.stack(x, y), fn.stack(x, y, axis=2), fn.stack(x, y, axis=-1),
                                     fn.stack(x, y, axis=1, axis_name="C"), fn.stack(x, y, axis=-2)),
                [a, c], ["HW", "HW"])
    for (s, l, t), axis in zip(outs, [0, 2, 2, 1, 1]):
        for i in range(n):
            np.testing.assert_array_equal(s[i], np.stack([a[i], c[i]], axis=axis))
        assert t == "uint8"
    assert [o[1] for o in outs] == ["", "", "", "HCW", ""]


def test_stack_0d_and_photos():
    sq = lambda fn, x: fn.squeeze(x, axes=[0])  # 0-d samples
    (s, l, t), = both(lambda fn, t, x, y, z: fn.stack(sq(fn, x), sq(fn, y), sq(fn, z)),
                      [[np.float32([1])], [np.float32([2])], [np.float32([3])]])
    np.testing.assert_array_equal(s[0], [1, 2, 3])
    imgs = imagenet_images(2)
    (s, l, t), = both(lambda fn, t, x, y: fn.stack(x, y, axis=0, axis_name="F"), [imgs, [i // 2 for i in imgs]],
                      ["HWC", "HWC"])
    for x, img in zip(s, imgs):
        np.testing.assert_array_equal(x, np.stack([img, img // 2]))
    assert (l, t) == ("FHWC", "uint8")


@pytest.mark.parametrize("kwargs, datas, layouts, rest", [
    (dict(), [A, B], ["HW", "HW"], "stacked samples must have the same shape, but sample 0 of input 0 has shape (2, 3) "
                                   "and of input 1 (2, 2)."),
    (dict(axis=-3), [A, A], ["HW", "HW"], "argument 'axis' is -3, out of range for 2-D inputs: give an axis in [-2, 2] "
                                         "(negative ones count from the back)."),
    (dict(axis=1, axis_name="C"), [A, A], [None, None], "argument 'axis_name' names the new axis in the input layout, "
                                                        "but the inputs have no layout. Give the inputs a layout, or "
                                                        "leave axis_name out."),
    (dict(axis_name="CD"), [A, A], ["HW", "HW"], "argument 'axis_name' must be one character (the new axis' name in "
                                                 "the layout), got 'CD'."),
])
def test_stack_errors(kwargs, datas, layouts, rest):
    e = stoker_error(lambda fn, t, *xs: fn.stack(*xs, **kwargs), datas, layouts)
    check_error(e, "stack", rest)
    dali_fails(lambda fn, t, *xs: fn.stack(*xs, **kwargs), datas, layouts)


# ---- permute_batch and batch_permutation

def test_permute_batch_list_and_tensor():
    imgs = imagenet_images(3)
    idx = [np.int32(2), np.int32(2), np.int32(0)]
    (s1, l1, _), (s2, l2, _) = both(
        lambda fn, t, x, i: (fn.permute_batch(x, indices=[1, 0, 1]), fn.permute_batch(x, indices=i)),
        [imgs, idx], ["HWC", None])
    for k, j in enumerate([1, 0, 1]):
        np.testing.assert_array_equal(s1[k], imgs[j])
    for k, j in enumerate([2, 2, 0]):
        np.testing.assert_array_equal(s2[k], imgs[j])
    assert l1 == l2 == "HWC"


def test_permute_batch_batch_of_one_and_shared_memory():
    (s, l, _), = both(lambda fn, t, x: fn.permute_batch(x, indices=[0]), [A[:1]], ["HW"])
    np.testing.assert_array_equal(s[0], A[0])

    @pipeline_def(batch_size=2, num_threads=2, device_id=None, seed=1)
    def pipe():
        x = fn.external_source(source=lambda: A, batch=True)
        return x, fn.permute_batch(x, indices=[1, 1])

    p = pipe()
    p.build()
    x, y = p.run()
    ptr = np.array(x.at(1), copy=False).__array_interface__["data"][0]
    assert [np.array(y.at(i), copy=False).__array_interface__["data"][0] for i in range(2)] == [ptr, ptr]


def test_permute_batch_takes_any_integer_scalars():
    # DALI 2.4 takes only int32 scalars ("Calling type does not match buffer data type").
    for idx in ([np.array(1, np.int64), np.array(0, np.int64)], [np.array([1], np.uint8), np.array([0], np.uint8)]):
        (s, _, _), = run(stoker_lib(), lambda fn, t, x, i: fn.permute_batch(x, indices=i), [A, idx])
        np.testing.assert_array_equal(s[0], A[1])
        np.testing.assert_array_equal(s[1], A[0])


@pytest.mark.parametrize("indices, rest", [
    ([1, 0, 1], "argument 'indices' has 3 indices for a batch of 2 samples; give one index per sample."),
    ([2, 0], "argument 'indices' [0] = 2 is not a sample of the batch of 2: give indices in [0, 1]."),
    ([-1, 0], "argument 'indices' [0] = -1 is not a sample of the batch of 2: give indices in [0, 1]."),
])
def test_permute_batch_errors(indices, rest):
    e = stoker_error(lambda fn, t, x: fn.permute_batch(x, indices=indices), [A])
    check_error(e, "permute_batch", rest)
    dali_fails(lambda fn, t, x: fn.permute_batch(x, indices=indices), [A])


def test_permute_batch_tensor_errors():
    e = stoker_error(lambda fn, t, x, i: fn.permute_batch(x, indices=i), [A, [np.float32(1), np.float32(0)]])
    check_error(e, "permute_batch", "argument 'indices' must hold integers, got a tensor of float32.")
    e = stoker_error(lambda fn, t, x, i: fn.permute_batch(x, indices=i), [A, [np.int32(5), np.int32(0)]])
    check_error(e, "permute_batch", "argument 'indices' [0] = 5 is not a sample of the batch of 2: give indices in [0, 1].")


def _permutations(bs, threads, iterations=4, **kw):
    outs = run(stoker_lib(), lambda fn, t, x: (fn.batch_permutation(**kw),), [[np.zeros(1)] * bs],
               threads=threads, iterations=iterations)
    return [[int(v) for v in o[0][0]] for o in outs]


@pytest.mark.parametrize("bs", [1, 2, 7, 32])
def test_batch_permutation_is_a_permutation(bs):
    perms = _permutations(bs, 2)
    for p in perms:
        assert sorted(p) == list(range(bs))
    (s, l, t), = run(stoker_lib(), lambda fn, t, x: fn.batch_permutation(), [[np.zeros(1)] * bs])
    assert (l, t) == ("", "int32") and all(x.shape == () for x in s)
    if bs >= 7:
        assert len({tuple(p) for p in perms}) > 1  # a new permutation each iteration


@pytest.mark.parametrize("bs", [1, 2, 9])
def test_batch_permutation_no_fixed_points_and_repetitions(bs):
    for p in _permutations(bs, 2, iterations=8, no_fixed_points=True):
        assert sorted(p) == list(range(bs))
        if bs > 1:
            assert all(v != i for i, v in enumerate(p))
    for p in _permutations(bs, 2, iterations=8, allow_repetitions=True, no_fixed_points=True):
        assert all(0 <= v < bs for v in p)
        if bs > 1:
            assert all(v != i for i, v in enumerate(p))
    reps = _permutations(16, 2, iterations=8, allow_repetitions=True)
    assert any(len(set(p)) < 16 for p in reps)


def test_batch_permutation_same_seed_same_permutation_whatever_threads():
    assert _permutations(16, 1) == _permutations(16, 3) == _permutations(16, 4)


def test_batch_permutation_like_dali_in_kind():
    try:
        dfn, dtypes, dpdef = real_dali()
    except pytest.skip.Exception:
        return
    outs = run((dfn, dtypes, dpdef), lambda fn, t, x: fn.batch_permutation(no_fixed_points=True),
               [[np.zeros(1)] * 5])
    (s, l, t), = outs
    assert (l, t) == ("", "int32") and all(x.shape == () for x in s)
