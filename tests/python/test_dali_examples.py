"""Pipelines that follow NVIDIA DALI 2.4's documentation examples (the conditional execution
tutorial and its AutoAugment sibling, the python_function tutorial, the reductions tutorial, the
arithmetic expression tutorials and the indexing guide), each written once as a function of the
modules (fn, types, math, pipeline_def, newaxis) and run unchanged with nvidia.dali (on the CPU)
and with stoker, on the same inputs: ImageNet sample photos read by fn.readers.file, or fixed
NumPy arrays fed by fn.external_source. Integer results must be equal; float results equal to a
relative 1e-6; resampled images (resize, rotate) within the rounding of the interpolation.

stoker's random streams differ from DALI's by design: where an example draws random numbers,
the tests compare what does not depend on the generator, or run DALI again with the numbers
stoker drew fed through external_source ("cross-feeding"), which checks everything the numbers
control."""
import numpy as np
import pytest

import stoker
from _dali_ref import imagenet_files

dali = pytest.importorskip("nvidia.dali")
if "stoker" in (getattr(dali, "__file__", "") or ""):
    pytest.skip("nvidia.dali is stoker's alias here", allow_module_level=True)
import nvidia.dali.fn  # noqa: E402
import nvidia.dali.math  # noqa: E402
import nvidia.dali.types  # noqa: E402

SEED = 42


class Lib:
    """One implementation of DALI's API: the modules an example is written against."""

    def __init__(self, name, fn, types, math, pipeline_def, newaxis):
        self.name, self.modules = name, (fn, types, math, pipeline_def, newaxis)


STOKER = Lib("stoker", stoker.fn, stoker.types, stoker.math, stoker.pipeline_def, stoker.newaxis)
DALI = Lib("dali", nvidia.dali.fn, nvidia.dali.types, nvidia.dali.math, dali.pipeline_def,
           dali.newaxis)


class Out:
    """One output of one iteration: its samples (NumPy arrays), layout and dtype."""

    def __init__(self, batch):
        self.samples = [np.array(batch[i]) for i in range(len(batch))]
        self.layout = batch.layout()
        self.dtype = self.samples[0].dtype if self.samples else None

    def __getitem__(self, i):
        return self.samples[i]

    def __len__(self):
        return len(self.samples)


def run(example, lib, *args, iterations=1, **kwargs):
    """Builds example(fn, types, math, pipeline_def, newaxis, *args, **kwargs) -> pipeline with
    `lib`'s modules and runs it: [Out per output], or a list of those per iteration."""
    p = example(*lib.modules, *args, **kwargs)
    p.build()
    result = []
    for _ in range(iterations):
        outs = p.run()
        result.append([Out(o) for o in outs])
    return result[0] if iterations == 1 else result


def both(example, *args, **kwargs):
    return run(example, STOKER, *args, **kwargs), run(example, DALI, *args, **kwargs)


def assert_same(mine, ref, rtol=0.0, atol=0.0):
    """Outputs equal: layouts, dtypes, shapes, and values (floats to rtol/atol)."""
    assert len(mine) == len(ref)
    for k, (m, r) in enumerate(zip(mine, ref)):
        assert (m.layout, m.dtype) == (r.layout, r.dtype), f"output {k}"
        assert [a.shape for a in m] == [b.shape for b in r], f"output {k}"
        for i, (a, b) in enumerate(zip(m, r)):
            if a.dtype.kind == "f" and (rtol or atol):
                np.testing.assert_allclose(a, b, rtol=rtol, atol=atol,
                                           err_msg=f"output {k} sample {i}")
            else:
                np.testing.assert_array_equal(a, b, err_msg=f"output {k} sample {i}")


def assert_resampled_close(a, b):
    """Images interpolated by two implementations (resize, rotate): the same shape and type, and
    the same pixels but for rounding, one level where a value lies near .5 (two on a rotated
    edge)."""
    assert a.shape == b.shape and a.dtype == b.dtype
    d = np.abs(a.astype(np.int64) - b.astype(np.int64))
    assert d.max() <= 2 and np.mean(d > 1) <= 1e-4 and d.mean() <= 0.01, (
        d.max(), np.mean(d > 1), d.mean())


def photos(n):
    return [str(f) for f in imagenet_files(n)]


def fixed(batch):
    """An external_source callback that gives the same batch each iteration."""
    return lambda: batch


def booleans(*values):
    return [np.array(bool(v)) for v in values]


# ======================================================================= conditional execution
# DALI's tutorial "Conditional execution in DALI": rotate an image with probability 0.25 by an
# angle from [10, 30), skip the rotation otherwise, then resize to 400x400.

def rotate_tutorial(fn, types, math, pipeline_def, newaxis, files, fed=None):
    @pipeline_def(enable_conditionals=True, batch_size=len(files), num_threads=2, device_id=None,
                  seed=SEED)
    def pipe():
        jpegs, _ = fn.readers.file(files=files)
        images = fn.decoders.image(jpegs)
        if fed is None:
            do_rotate = fn.random.coin_flip(probability=0.25, dtype=types.BOOL)
            angle = fn.random.uniform(range=(10, 30))
        else:
            do_rotate = fn.external_source(source=fixed(fed[0]))
            angle = fn.external_source(source=fixed(fed[1]))
        if do_rotate:
            result = fn.rotate(images, angle=angle, fill_value=0)
        else:
            result = images
        resized = fn.resize(result, resize_x=400, resize_y=400)
        return resized, do_rotate, angle
    return pipe()


def test_rotate_tutorial_with_fixed_predicates_matches_dali():
    files = photos(6)
    fed = (booleans(1, 0, 1, 1, 0, 0), [np.float32(a) for a in (10, 12.5, 17, 29.9, 20, 11)])
    mine, ref = both(rotate_tutorial, files, fed)
    assert_same(mine[1:], ref[1:])
    assert (mine[0].layout, mine[0].dtype) == (ref[0].layout, ref[0].dtype) == ("HWC", np.uint8)
    for a, b in zip(mine[0], ref[0]):
        assert a.shape == (400, 400, 3)
        assert_resampled_close(a, b)


def test_rotate_tutorial_with_random_predicates_matches_dali_fed_stokers_draws():
    files = photos(8)
    rotated = 0
    for resized, do_rotate, angle in run(rotate_tutorial, STOKER, files, iterations=2):
        assert (do_rotate.dtype, angle.dtype) == (np.bool_, np.float32)
        assert all(a.shape == () and 10 <= a < 30 for a in angle)
        rotated += sum(map(bool, do_rotate))
        # What stoker drew, run through DALI: the branches must have done the same.
        ref = run(rotate_tutorial, DALI, files, (do_rotate.samples, angle.samples))
        for a, b in zip(resized, ref[0]):
            assert_resampled_close(a, b)
    assert 0 < rotated < 16
    # DALI's own draws give the same kinds of outputs.
    own = run(rotate_tutorial, DALI, files)
    assert [(o.layout, o.dtype) for o in own] == [(o.layout, o.dtype) for o in
                                                 (resized, do_rotate, angle)]


def test_resize_border_matches_dali():
    files = photos(6)
    mine, ref = both(rotate_tutorial, files, (booleans(*[0] * 6), [np.float32(0)] * 6))
    for a, b in zip(mine[0], ref[0]):
        assert np.abs(a.astype(np.int64) - b.astype(np.int64)).max() <= 1


# The tutorial's "Python statements and tracing": only an `if` on a DataNode traces both
# branches; a Python value picks one branch while the pipeline is defined.

def tracing_example(fn, types, math, pipeline_def, newaxis, trace, python_value):
    @pipeline_def(enable_conditionals=True, batch_size=2, num_threads=1, device_id=None,
                  seed=SEED)
    def pipe():
        images = fn.external_source(source=fixed([np.zeros((2, 2, 3), np.uint8)] * 2))
        dali_random_value = fn.random.coin_flip(dtype=types.BOOL)
        if (dali_random_value if python_value is None else python_value):
            trace.append("true branch")
            result = images + 10
        else:
            trace.append("false branch")
            result = images + 0
        return result
    return pipe()


@pytest.mark.parametrize("python_value", [None, True, False])
def test_tracing_covers_both_branches_only_for_datanode_conditions(python_value):
    traces = []
    for lib in (STOKER, DALI):
        trace = []
        tracing_example(*lib.modules, trace, python_value)
        traces.append(trace)
    want = {None: ["true branch", "false branch"], True: ["true branch"],
            False: ["false branch"]}[python_value]
    assert traces == [want, want]


def _small_photos(n, h=40, w=56):
    from PIL import Image
    return [np.asarray(Image.open(f).convert("RGB").resize((w + 2 * i, h)))
            for i, f in enumerate(photos(n))]


# DALI's "AutoAugment using DALI conditionals": a random policy id picks a subpolicy (a Python
# loop spells out one `if policy_id == i` per policy); each subpolicy applies its two operations
# when a random number falls under their probabilities. The operations here are exact ones
# (stoker and DALI must agree to the bit); stoker draws the random numbers, DALI is fed them.

def mirror(fn, types, img):
    return fn.flip(img, horizontal=1)


def rotate90(fn, types, img):
    return fn.rotate(img, angle=90)


def invert(fn, types, img):
    return fn.cast(255 - img, dtype=types.UINT8)


def posterize(fn, types, img):
    return fn.cast(img & 0xE0, dtype=types.UINT8)


def solarize(fn, types, img):
    """Where the mask holds take the inverted pixel: the expressions tutorial's multiplexing."""
    mask = img >= 128
    return fn.cast(mask * (255 - img) + (mask ^ True) * img, dtype=types.UINT8)


def translate_x(fn, types, img):
    # The tutorial builds the matrix with fn.transforms.translation(offset=[10, 0]), which
    # stoker does not have yet; the same matrix, written out:
    return fn.warp_affine(img, matrix=[1, 0, 10, 0, 1, 0], fill_value=0, inverse_map=False)


def subpolicy(first, p_first, second, p_second):
    def apply(fn, types, images, draw0, draw1):
        if draw0 < p_first:
            images = first(fn, types, images)
        if draw1 < p_second:
            images = second(fn, types, images)
        return images
    return apply


POLICIES = [(mirror, 0.7, invert, 0.3), (rotate90, 0.5, posterize, 0.8),
            (solarize, 0.6, translate_x, 0.5), (translate_x, 0.4, mirror, 0.6)]


def auto_augment(fn, types, math, pipeline_def, newaxis, images, fed=None):
    policies = [subpolicy(*p) for p in POLICIES]

    @pipeline_def(enable_conditionals=True, batch_size=len(images), num_threads=2,
                  device_id=None, seed=13)
    def pipe():
        img = fn.external_source(source=fixed(images), layout="HWC")
        if fed is None:
            policy_id = fn.random.uniform(values=list(range(len(policies))), dtype=types.INT32)
            rand0 = fn.random.uniform()
            rand1 = fn.random.uniform()
        else:
            policy_id, rand0, rand1 = [fn.external_source(source=fixed(f)) for f in fed]
        out = img
        for i in range(len(policies)):
            if policy_id == i:
                out = policies[i](fn, types, img, rand0, rand1)
        return out, policy_id, rand0, rand1
    return pipe()


def auto_augment_numpy(img, policy_id, rand0, rand1):
    def shift(a):
        out = np.zeros_like(a)
        out[:, 10:] = a[:, :-10]
        return out
    ops = {mirror: lambda a: a[:, ::-1], rotate90: np.rot90, invert: lambda a: 255 - a,
           posterize: lambda a: a & 0xE0, solarize: lambda a: np.where(a >= 128, 255 - a, a),
           translate_x: shift}
    op0, p0, op1, p1 = POLICIES[policy_id]
    if rand0 < p0:
        img = ops[op0](img)
    if rand1 < p1:
        img = ops[op1](img)
    return img


def test_auto_augment_policies_match_dali_and_numpy():
    images = _small_photos(8)
    fed = ([np.int32(v) for v in (0, 0, 1, 1, 2, 2, 3, 3)],
           [np.float32(v) for v in (0.1, 0.9, 0.2, 0.6, 0.5, 0.7, 0.3, 0.45)],
           [np.float32(v) for v in (0.2, 0.5, 0.9, 0.1, 0.4, 0.6, 0.55, 0.7)])
    mine, ref = both(auto_augment, images, fed)
    assert_same(mine, ref)
    for got, img, pid, r0, r1 in zip(mine[0], images, *fed):
        np.testing.assert_array_equal(got, auto_augment_numpy(img, pid, r0, r1))


def test_auto_augment_with_random_policies_matches_dali_fed_stokers_draws():
    images = _small_photos(8)
    for mine in run(auto_augment, STOKER, images, iterations=2):
        out, policy_id, rand0, rand1 = mine
        assert policy_id.dtype == np.int32
        assert all(p.shape == () and 0 <= p < len(POLICIES) for p in policy_id)
        assert all(-1 <= r < 1 for r in rand0.samples + rand1.samples)   # the default range
        ref = run(auto_augment, DALI, images, (policy_id.samples, rand0.samples, rand1.samples))
        assert_same(mine, ref)
        for got, img, pid, r0, r1 in zip(out, images, policy_id, rand0, rand1):
            np.testing.assert_array_equal(got, auto_augment_numpy(img, pid, r0, r1))


# The tutorial's rules for predicates: `and`, `or`, `not` on per-sample booleans, nested
# conditions, helper functions that contain conditionals themselves.

def flip_if(fn, images, predicate):
    """A helper with its own conditional, called from the pipeline (converted with it)."""
    if predicate:
        return fn.flip(images, horizontal=1)
    return images


def logic_example(fn, types, math, pipeline_def, newaxis, images, do_flip, do_rotate, labels):
    @pipeline_def(enable_conditionals=True, batch_size=len(images), num_threads=2,
                  device_id=None, seed=SEED)
    def pipe():
        img = fn.external_source(source=fixed(images), layout="HWC")
        flip = fn.external_source(source=fixed(do_flip))
        rot = fn.external_source(source=fixed(do_rotate))
        label = fn.external_source(source=fixed(labels))
        if flip and not rot:
            a = fn.flip(img, horizontal=1)
        elif flip or rot:
            a = fn.rotate(img, angle=180)
        else:
            a = img
        if not (label > 1 and flip) or rot:
            b = img // 2
        else:
            b = img * 2
        c = flip_if(fn, img, label == 2 or not flip)
        return a, b, c, flip and rot, flip or rot, not flip
    return pipe()


def test_and_or_not_and_helper_conditionals_match_dali():
    images = _small_photos(6)
    flips, rots = booleans(1, 1, 0, 0, 1, 0), booleans(0, 1, 1, 0, 0, 1)
    labels = [np.int32(v) for v in (2, 0, 3, 2, 5, 1)]
    mine, ref = both(logic_example, images, flips, rots, labels)
    assert_same(mine, ref)
    for i, (img, f, r, l) in enumerate(zip(images, flips, rots, labels)):
        a = img[:, ::-1] if f and not r else img[::-1, ::-1] if f or r else img
        np.testing.assert_array_equal(mine[0][i], a)
        halve = not (l > 1 and f) or r
        np.testing.assert_array_equal(mine[1][i], img // 2 if halve else img.astype(np.int32) * 2)
        np.testing.assert_array_equal(mine[2][i], img[:, ::-1] if l == 2 or not f else img)
        assert (mine[3][i], mine[4][i], mine[5][i]) == (f and r, f or r, not f)
    assert [o.dtype for o in mine[3:]] == [np.bool_] * 3


def nested_example(fn, types, math, pipeline_def, newaxis, images, outer, inner):
    @pipeline_def(enable_conditionals=True, batch_size=len(images), num_threads=2,
                  device_id=None, seed=SEED)
    def pipe():
        img = fn.external_source(source=fixed(images), layout="HWC")
        augment = fn.external_source(source=fixed(outer))
        which = fn.external_source(source=fixed(inner))
        if augment:
            if which == 0:
                out = fn.flip(img, vertical=1, horizontal=0)
            else:
                if which == 1:
                    out = fn.rotate(img, angle=-90)
                else:
                    out = fn.crop(img, crop=(24, 24))
            out = fn.flip(out, horizontal=1)
        else:
            out = fn.crop(img, crop=(32, 32))
        return out
    return pipe()


def test_nested_conditions_match_dali():
    images = _small_photos(6)
    outer, inner = booleans(1, 1, 1, 0, 1, 0), [np.int32(v) for v in (0, 1, 2, 1, 1, 0)]
    mine, ref = both(nested_example, images, outer, inner)
    assert_same(mine, ref)

    def crop(img, n):
        y, x = round((img.shape[0] - n) / 2), round((img.shape[1] - n) / 2)
        return img[y:y + n, x:x + n]
    for got, img, o, w in zip(mine[0], images, outer, inner):
        if o:
            want = img[::-1] if w == 0 else np.rot90(img, -1) if w == 1 else crop(img, 24)
            want = want[:, ::-1]
        else:
            want = crop(img, 32)
        np.testing.assert_array_equal(got, want)


# Random operators inside branches draw only for the samples the branch takes; a different
# range in each branch shows which branch a sample took, and the rotation the draw controls is
# checked against DALI fed the same numbers.

def random_in_branches(fn, types, math, pipeline_def, newaxis, images, preds, angles=None):
    @pipeline_def(enable_conditionals=True, batch_size=len(images), num_threads=2,
                  device_id=None, seed=SEED)
    def pipe():
        img = fn.external_source(source=fixed(images), layout="HWC")
        pred = fn.external_source(source=fixed(preds))
        given = None if angles is None else fn.external_source(source=fixed(angles))
        if pred:
            angle = fn.random.uniform(range=(10, 30)) if given is None else given
            out = fn.rotate(img, angle=angle, fill_value=0, keep_size=True)
        else:
            angle = fn.random.uniform(range=(-30, -10)) if given is None else given
            out = fn.flip(fn.rotate(img, angle=angle, fill_value=0, keep_size=True),
                          horizontal=1)
        return out, angle
    return pipe()


def test_random_operators_in_branches_match_dali_fed_stokers_draws():
    images = _small_photos(6)
    preds = booleans(1, 0, 0, 1, 1, 0)
    for out, angle in run(random_in_branches, STOKER, images, preds, iterations=2):
        assert angle.dtype == np.float32
        for a, p in zip(angle, preds):
            assert (10 <= a < 30) if p else (-30 <= a < -10)
        ref = run(random_in_branches, DALI, images, preds, angle.samples)
        assert (out.layout, out.dtype) == (ref[0].layout, ref[0].dtype)
        for a, b in zip(out, ref[0]):
            assert_resampled_close(a, b)
    # DALI's own draws land in the same ranges.
    _, angle = run(random_in_branches, DALI, images, preds)
    assert all((10 <= a < 30) if p else (-30 <= a < -10) for a, p in zip(angle, preds))


# "Conditional-like execution and masking" (the arithmetic expressions tutorial): before
# conditionals, a per-sample choice was a multiplexing expression,
# condition * augmented + (condition ^ True) * original. It must equal the `if` version.

def mux_example(fn, types, math, pipeline_def, newaxis, files, conditions=None):
    @pipeline_def(enable_conditionals=True, batch_size=len(files), num_threads=2,
                  device_id=None, seed=SEED)
    def pipe():
        encoded, _ = fn.readers.file(files=files)
        photo = fn.decoders.image(encoded, output_type=types.RGB)
        adjusted = fn.brightness_contrast(photo, brightness=3, contrast=1.5)
        if conditions is None:
            cond = fn.random.coin_flip(dtype=types.DALIDataType.BOOL)
        else:
            cond = fn.external_source(source=fixed(conditions))
        muxed = cond * adjusted + (cond ^ True) * photo   # `not` of a batch is `^ True`
        if cond:
            chosen = adjusted
        else:
            chosen = photo
        return muxed, chosen, photo, adjusted, cond
    return pipe()


def test_multiplexing_expression_equals_the_if_version_in_both():
    files = photos(6)
    for lib in (STOKER, DALI):
        out, chosen, imgs, adjusted, condition = run(mux_example, lib, files)
        assert (out.dtype, chosen.dtype, condition.dtype) == (np.uint8, np.uint8, np.bool_)
        for i, c in enumerate(condition):
            np.testing.assert_array_equal(out[i], chosen[i])
            np.testing.assert_array_equal(out[i], adjusted[i] if c else imgs[i])
    fed = booleans(1, 0, 1, 1, 0, 1)
    mine, ref = both(mux_example, files, fed)
    assert_same([mine[2], mine[4]], [ref[2], ref[4]])   # the decoded photos and the conditions


def test_multiplexing_tutorial_matches_dali():
    mine, ref = both(mux_example, photos(6), booleans(1, 0, 1, 1, 0, 1))
    assert_same(mine, ref)


# ======================================================================= python_function
# DALI's tutorial "Python Operators": edit_images swaps a circular region between two images
# (two inputs, two outputs); the function must not modify its inputs.

def edit_images(image1, image2):
    """Swap what lies outside a centred disc between two images of one shape."""
    h, w = image1.shape[:2]
    rows, cols = np.indices((h, w))
    outside = ((cols - w / 2) ** 2 + (rows - h / 2) ** 2 > h * w / 9)[:, :, None]
    return np.where(outside, image2, image1), np.where(outside, image1, image2)


def edit_images_tutorial(fn, types, math, pipeline_def, newaxis, files):
    @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=99)
    def pipe():
        jpegs1, _ = fn.readers.file(files=files)
        jpegs2, _ = fn.readers.file(files=files[::-1])
        im1 = fn.decoders.image(jpegs1, output_type=types.RGB)
        im2 = fn.decoders.image(jpegs2, output_type=types.RGB)
        im1, im2 = fn.resize(im1, resize_x=300, resize_y=300), fn.resize(im2, resize_x=300,
                                                                          resize_y=300)
        res1, res2 = fn.python_function(im1, im2, function=edit_images, num_outputs=2)
        return res1, res2, im1, im2
    return pipe()


def test_edit_images_tutorial_matches_dali_and_numpy():
    mine, ref = both(edit_images_tutorial, photos(4))
    for k in range(4):
        assert (mine[k].layout, mine[k].dtype) == (ref[k].layout, ref[k].dtype)
        for a, b in zip(mine[k], ref[k]):
            assert_resampled_close(a, b)
    for outs in (mine, ref):
        res1, res2, im1, im2 = outs
        for i in range(len(im1)):
            want1, want2 = edit_images(im1[i], im2[i])
            np.testing.assert_array_equal(res1[i], want1)
            np.testing.assert_array_equal(res2[i], want2)


def batch_contrast(images):
    """Batch processing: one statistic over the whole batch, applied to every sample."""
    mean = np.mean([img.mean() for img in images])
    return [np.clip((img.astype(np.float32) - mean) * 1.5 + mean, 0, 255).astype(np.uint8)
            for img in images]


def sample_stats(image):
    """Per sample, outputs of different shapes and types."""
    return (image.mean(axis=(0, 1)).astype(np.float32), np.int64(image.shape[:2]),
            image[::4, ::4].copy())


def python_function_variants(fn, types, math, pipeline_def, newaxis, images):
    @pipeline_def(batch_size=len(images), num_threads=2, device_id=None, seed=SEED)
    def pipe():
        img = fn.external_source(source=fixed(images), layout="HWC")
        batch = fn.python_function(img, function=batch_contrast, batch_processing=True)
        means, hw, small = fn.python_function(img, function=sample_stats, num_outputs=3,
                                              output_layouts=["C", "", "HWC"])
        return batch, means, hw, small
    return pipe()


def test_batch_processing_and_several_outputs_match_dali():
    images = _small_photos(5)
    mine, ref = both(python_function_variants, images)
    assert_same(mine, ref)
    for got, want in zip(mine[0], batch_contrast(images)):
        np.testing.assert_array_equal(got, want)
    assert [o.layout for o in mine] == ["", "C", "", "HWC"]


def torch_mirror(capsule):
    """dl_tensor_python_function: a DLPack capsule in and out (here through PyTorch)."""
    import torch.utils.dlpack as tud
    return tud.to_dlpack(tud.from_dlpack(capsule).flip(1).contiguous())


def dl_tensor_example(fn, types, math, pipeline_def, newaxis, images):
    @pipeline_def(batch_size=len(images), num_threads=2, device_id=None, seed=SEED)
    def pipe():
        img = fn.external_source(source=fixed(images), layout="HWC")
        # DALI's dl_tensor_python_function takes the whole batch unless told otherwise.
        per_sample = fn.dl_tensor_python_function(img, function=torch_mirror,
                                                  batch_processing=False)
        per_batch = fn.dl_tensor_python_function(
            img, function=lambda capsules: [torch_mirror(c) for c in capsules])
        return per_sample, per_batch
    return pipe()


def test_dl_tensor_python_function_matches_dali():
    pytest.importorskip("torch")
    images = _small_photos(4)
    mine, ref = both(dl_tensor_example, images)
    assert_same(mine, ref)
    for a, b, img in zip(mine[0], mine[1], images):
        np.testing.assert_array_equal(a, img[:, ::-1])
        np.testing.assert_array_equal(b, img[:, ::-1])


def vignette(image):
    """Defined at module level, as DALI asks of functions used in a pipeline with
    conditionals."""
    h, w, _ = image.shape
    y, x = np.ogrid[0:h, 0:w]
    weight = 1 - ((x - w / 2) ** 2 + (y - h / 2) ** 2) / (h * h + w * w)
    return (image * weight[:, :, None]).astype(np.uint8)


def python_function_in_branch(fn, types, math, pipeline_def, newaxis, images, preds):
    @pipeline_def(enable_conditionals=True, batch_size=len(images), num_threads=2,
                  device_id=None, seed=SEED)
    def pipe():
        img = fn.external_source(source=fixed(images), layout="HWC")
        pred = fn.external_source(source=fixed(preds))
        if pred:
            out = fn.python_function(img, function=vignette)
        else:
            out = fn.python_function(img, img, function=edit_images, num_outputs=2)[0]
        return out
    return pipe()


def test_python_function_in_branches_matches_dali():
    images = _small_photos(5)
    preds = booleans(1, 0, 0, 1, 1)
    mine, ref = both(python_function_in_branch, images, preds)
    assert_same(mine, ref)
    for got, img, p in zip(mine[0], images, preds):
        np.testing.assert_array_equal(got, vignette(img) if p else img)


# ======================================================================= reductions
# DALI's tutorial "Reduction Operators": two 3x3 samples, consecutive numbers and consecutive
# even numbers; then 2x2x2 int32 samples.

def tutorial_batch_2d():
    return [np.reshape(np.arange(9), (3, 3)) * (i + 1) for i in range(2)]


def tutorial_batch_3d():
    return [np.reshape(np.arange(8, dtype=np.int32), (2, 2, 2)) * (i + 1) for i in range(2)]


def reductions_2d(fn, types, math, pipeline_def, newaxis):
    @pipeline_def(batch_size=2, num_threads=4, device_id=None, seed=SEED)
    def pipe():
        data = fn.external_source(source=tutorial_batch_2d, layout="AB")
        return (fn.reductions.max(data), fn.reductions.min(data), fn.reductions.sum(data),
                fn.reductions.min(data, axes=0), fn.reductions.min(data, axes=1),
                fn.reductions.min(data, axis_names="A"), fn.reductions.min(data, axis_names="B"),
                fn.reductions.min(data, axes=(0, 1)), fn.reductions.min(data, axes=()),
                fn.reductions.min(data, axis_names="AB"), fn.reductions.min(data, axis_names=""))
    return pipe()


def test_reductions_tutorial_axes_and_axis_names_match_dali():
    mine, ref = both(reductions_2d)
    assert_same(mine, ref)
    got = [np.stack(o.samples) for o in mine]
    np.testing.assert_array_equal(got[0], [8, 16])
    np.testing.assert_array_equal(got[1], [0, 0])
    np.testing.assert_array_equal(got[2], [36, 72])
    np.testing.assert_array_equal(got[3], [[0, 1, 2], [0, 2, 4]])
    np.testing.assert_array_equal(got[4], [[0, 3, 6], [0, 6, 12]])
    np.testing.assert_array_equal(got[5], got[3])
    np.testing.assert_array_equal(got[6], got[4])
    np.testing.assert_array_equal(got[7], [0, 0])
    np.testing.assert_array_equal(got[8], np.stack(tutorial_batch_2d()))
    np.testing.assert_array_equal(got[9], [0, 0])
    np.testing.assert_array_equal(got[10], np.stack(tutorial_batch_2d()))
    assert [o.layout for o in mine[3:7]] == ["B", "A", "B", "A"]
    assert mine[0].dtype == np.int64


def reductions_3d(fn, types, math, pipeline_def, newaxis):
    @pipeline_def(batch_size=2, num_threads=4, device_id=None, seed=SEED)
    def pipe():
        data = fn.external_source(source=tutorial_batch_3d, layout="ABC")
        return (fn.reductions.min(data, axes=()), fn.reductions.min(data, axes=(0, 1)),
                fn.reductions.min(data, axis_names="AC"))
    return pipe()


def test_reductions_tutorial_any_combination_of_axes_matches_dali():
    mine, ref = both(reductions_3d)
    assert_same(mine, ref)
    np.testing.assert_array_equal(np.stack(mine[1].samples), [[0, 1], [0, 2]])
    np.testing.assert_array_equal(np.stack(mine[2].samples), [[0, 2], [0, 4]])
    assert [o.layout for o in mine] == ["ABC", "C", "B"]


def std_dev_tutorial(fn, types, math, pipeline_def, newaxis):
    @pipeline_def(batch_size=2, num_threads=4, device_id=None, seed=SEED)
    def pipe():
        data = fn.external_source(source=tutorial_batch_3d)
        mean = fn.reductions.mean(data)
        std_dev = fn.reductions.std_dev(data, mean)
        variance = fn.reductions.variance(data, mean)
        kept = fn.reductions.std_dev(data, mean, keep_dims=True)
        return mean, std_dev, variance, kept
    return pipe()


def test_reductions_tutorial_std_dev_and_variance_from_a_mean_match_dali():
    mine, ref = both(std_dev_tutorial)
    assert_same(mine, ref, rtol=1e-6)
    np.testing.assert_allclose(np.stack(mine[0].samples), [3.5, 7.0], rtol=1e-6)
    np.testing.assert_allclose(np.stack(mine[1].samples), [2.291288, 4.582576], rtol=1e-6)
    np.testing.assert_allclose(np.stack(mine[2].samples), [5.25, 21.0], rtol=1e-6)
    assert mine[0].dtype == np.float32 and mine[3][0].shape == (1, 1, 1)


def dtype_tutorial(fn, types, math, pipeline_def, newaxis):
    @pipeline_def(batch_size=2, num_threads=4, device_id=None, seed=SEED)
    def pipe():
        data = fn.external_source(source=tutorial_batch_3d)
        return (fn.reductions.sum(data), fn.reductions.sum(data, dtype=types.INT64),
                fn.reductions.sum(data, dtype=types.FLOAT), fn.reductions.mean(data))
    return pipe()


def test_reductions_tutorial_output_dtypes_match_dali():
    mine, ref = both(dtype_tutorial)
    assert_same(mine, ref)
    assert [o.dtype for o in mine] == [np.int64, np.int64, np.float32, np.float32]
    np.testing.assert_array_equal(np.stack(mine[2].samples), [28.0, 56.0])


def all_reductions_cell(fn, types, math, pipeline_def, newaxis, variance_keep_dims):
    """The tutorial's last cell (run there on the GPU), on the CPU."""
    @pipeline_def(batch_size=2, num_threads=4, device_id=None, seed=SEED)
    def pipe():
        data = fn.external_source(source=tutorial_batch_3d, layout="ABC")
        mean = fn.reductions.mean(data, axes=0)
        return (fn.reductions.min(data, axis_names="AC", keep_dims=True),
                fn.reductions.max(data, keep_dims=True),
                fn.reductions.sum(data, dtype=types.INT64), mean,
                fn.reductions.mean_square(data),
                fn.reductions.rms(data, axes=(), dtype=types.FLOAT),
                fn.reductions.std_dev(data, mean, axes=0),
                fn.reductions.variance(data, mean, axes=0, keep_dims=variance_keep_dims))
    return pipe()


@pytest.mark.parametrize("variance_keep_dims", [False, True])
def test_reductions_tutorial_all_reductions_match_dali_and_numpy(variance_keep_dims):
    mine, ref = both(all_reductions_cell, variance_keep_dims)
    assert_same(mine, ref, rtol=1e-6)
    for i, x in enumerate(tutorial_batch_3d()):
        f = x.astype(np.float64)
        np.testing.assert_array_equal(mine[0][i], x.min(axis=(0, 2), keepdims=True))
        np.testing.assert_array_equal(mine[1][i], x.max(keepdims=True))
        np.testing.assert_allclose(mine[4][i], (f ** 2).mean(), rtol=1e-6)
        np.testing.assert_allclose(mine[5][i], np.abs(f), rtol=1e-6)
        np.testing.assert_allclose(mine[6][i], f.std(axis=0), rtol=1e-6)
        np.testing.assert_allclose(mine[7][i], f.var(axis=0, keepdims=variance_keep_dims),
                                   rtol=1e-6)


# ======================================================================= arithmetic expressions
# DALI's tutorial "DALI Expressions and Arithmetic Operators".

LEFT = [[[42, 7, 0], [0, 0, 0]], [[5, 10, 15], [10, 100, 1000]]]
RIGHT = [[[3, 3, 3], [1, 3, 5]], [[1, 5, 5], [1, 1, 1]]]


def magic_values():
    return [np.int32(t) for t in LEFT], [np.int32(t) for t in RIGHT]


def tensor_expressions(fn, types, math, pipeline_def, newaxis):
    @pipeline_def(batch_size=2, num_threads=4, device_id=None, seed=SEED)
    def pipe():
        left, right = fn.external_source(source=magic_values, num_outputs=2)
        per_sample = fn.external_source(source=lambda: np.arange(1, 3))   # 0-d samples 1, 2
        return (left + right, left * right, left // right, left + 200, left * 0.75,
                left + per_sample, -left, +right)
    return pipe()


def test_expressions_on_tensors_constants_and_scalars_match_dali():
    mine, ref = both(tensor_expressions)
    assert_same(mine, ref)
    got = [np.stack(o.samples) for o in mine]
    np.testing.assert_array_equal(got[0], [[[45, 10, 3], [1, 3, 5]],
                                           [[6, 15, 20], [11, 101, 1001]]])
    np.testing.assert_array_equal(got[1], [[[126, 21, 0], [0, 0, 0]],
                                           [[5, 50, 75], [10, 100, 1000]]])
    np.testing.assert_array_equal(got[2], [[[14, 2, 0], [0, 0, 0]],
                                           [[5, 2, 3], [10, 100, 1000]]])
    np.testing.assert_array_equal(got[3], np.int32(LEFT) + 200)
    np.testing.assert_array_equal(got[4], np.float32(LEFT) * np.float32(0.75))
    np.testing.assert_array_equal(got[5], [[[43, 8, 1], [1, 1, 1]],
                                           [[7, 12, 17], [12, 102, 1002]]])
    assert [o.dtype for o in mine] == [np.int32] * 4 + [np.float32, np.int64, np.int32, np.int32]


def constant_conversion(fn, types, math, pipeline_def, newaxis):
    @pipeline_def(batch_size=2, num_threads=4, device_id=None, seed=SEED)
    def pipe():
        _, right = fn.external_source(source=magic_values, num_outputs=2)
        return types.Constant(15).float32() - right
    return pipe()


def test_constant_conversion_methods_match_dali():
    mine, ref = both(constant_conversion)
    assert_same(mine, ref)
    np.testing.assert_array_equal(np.stack(mine[0].samples), 15 - np.float32(RIGHT))


# "DALI Binary Arithmetic Operators - Type Promotions": left [42, 8], right [9, 2], one pipeline
# per left type with every right type (the tutorial's np_types) and every operator.

NP_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
            np.float32, np.float64]
ARITHMETIC = [lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y, lambda x, y: x / y,
              lambda x, y: x // y]
BITWISE = [lambda x, y: x | y, lambda x, y: x & y, lambda x, y: x ^ y]


DALI_TYPE_NAMES = {"int8": "INT8", "int16": "INT16", "int32": "INT32", "int64": "INT64",
                   "uint8": "UINT8", "uint16": "UINT16", "uint32": "UINT32", "uint64": "UINT64",
                   "float32": "FLOAT", "float64": "FLOAT64"}


def promotions(fn, types, math, pipeline_def, newaxis, left_type, to_dali_type=False):
    def dali_type(np_type):
        if to_dali_type:         # the tutorial's spelling
            return types.to_dali_type(np.dtype(np_type).name)
        return getattr(types, DALI_TYPE_NAMES[np.dtype(np_type).name])

    @pipeline_def(batch_size=1, num_threads=4, device_id=None, seed=SEED)
    def pipe():
        outs = []
        for right_type in NP_TYPES:
            left, right = fn.external_source(
                source=fixed(([left_type([42, 8])], [right_type([9, 2])])),
                num_outputs=2, dtype=[dali_type(left_type), dali_type(right_type)])
            ops = ARITHMETIC + (BITWISE if np.dtype(left_type).kind in "iu" and
                                np.dtype(right_type).kind in "iu" else [])
            outs += [op(left, right) for op in ops]
        return tuple(outs)
    return pipe()


@pytest.mark.parametrize("left_type", NP_TYPES, ids=lambda t: np.dtype(t).name)
def test_type_promotions_match_dali(left_type):
    mine, ref = both(promotions, left_type)
    assert_same(mine, ref)


def test_type_promotions_tutorial_with_to_dali_type_matches_dali():
    mine, ref = both(promotions, np.uint8, to_dali_type=True)
    assert_same(mine, ref)


def constants_tutorial(fn, types, math, pipeline_def, newaxis):
    @pipeline_def(batch_size=1, num_threads=4, device_id=None, seed=SEED)
    def pipe():
        u8 = fn.external_source(source=lambda: [np.uint8([42, 8])], dtype=types.UINT8)
        f32 = fn.external_source(source=lambda: [np.float32([42, 8])], dtype=types.FLOAT)
        return (u8 + 10, f32 + 10, u8 + 42.3, f32 + 42.3,
                u8 * types.Constant(10), types.Constant(10.0) * u8,
                u8 * types.Constant(10, types.DALIDataType.UINT8),
                types.Constant(10.0, types.DALIDataType.UINT8) * u8,
                (types.Constant(4, types.UINT16) * u8 + types.Constant(6, types.UINT16) * u8)
                // types.Constant(20, types.UINT16))
    return pipe()


def test_constants_tutorial_matches_dali():
    mine, ref = both(constants_tutorial)
    assert_same(mine, ref)
    assert [o.dtype for o in mine] == [np.int32, np.float32, np.float32, np.float32, np.int32,
                                       np.float32, np.uint8, np.uint8, np.uint16]
    np.testing.assert_array_equal(mine[6][0], [164, 80])     # 420 wraps in uint8


# "Custom Augmentations with Arithmetic Operations": blend two batches of photos.

def blend_tutorial(fn, types, math, pipeline_def, newaxis, files_a, files_b, as_list):
    @pipeline_def(batch_size=len(files_a), num_threads=4, device_id=None, seed=SEED)
    def pipe():
        enc_a, _ = fn.readers.file(files=files_a)
        enc_b, _ = fn.readers.file(files=files_b)
        if as_list:      # the tutorial's spelling: one operator call on a list of inputs
            decoded = fn.decoders.image([enc_a, enc_b], output_type=types.RGB)
            a, b = fn.resize(decoded, resize_x=400, resize_y=400)
        else:
            a, b = [fn.resize(fn.decoders.image(e, output_type=types.RGB), resize_x=400,
                              resize_y=400) for e in (enc_a, enc_b)]
        in_float = (0.4 * a + 0.6 * b) / 2
        u16 = types.UINT16
        in_uint16 = (types.Constant(4, u16) * a + types.Constant(6, u16) * b) // types.Constant(
            20, u16)
        return (a, b, fn.cast(in_float, dtype=types.DALIDataType.UINT8),
                fn.cast(in_uint16, dtype=types.DALIDataType.UINT8))
    return pipe()


def _check_blend(as_list):
    files = photos(6)
    mine, ref = both(blend_tutorial, files[:3], files[3:], as_list)
    for k in range(4):
        assert (mine[k].layout, mine[k].dtype) == (ref[k].layout, ref[k].dtype)
        for a, b in zip(mine[k], ref[k]):
            assert_resampled_close(a, b)
    # Where both resized the pixel alike, the blends must agree exactly.
    for i in range(3):
        same = (mine[0][i] == ref[0][i]) & (mine[1][i] == ref[1][i])
        for k in (2, 3):
            np.testing.assert_array_equal(mine[k][i][same], ref[k][i][same])
        c, d = mine[0][i].astype(np.uint16), mine[1][i].astype(np.uint16)
        np.testing.assert_array_equal(mine[3][i], ((4 * c + 6 * d) // 20).astype(np.uint8))


def test_blend_tutorial_matches_dali():
    _check_blend(as_list=False)


def test_blend_tutorial_with_list_inputs_matches_dali():
    _check_blend(as_list=True)


# Comparison operators and masks (the expressions tutorial's list of supported operators, and
# its masking section): comparisons give bool, a bool times a number keeps the number's type.

def masking_example(fn, types, math, pipeline_def, newaxis, files):
    @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=SEED)
    def pipe():
        jpegs, _ = fn.readers.file(files=files)
        imgs = fn.decoders.image(jpegs, output_type=types.RGB)
        bright = imgs > 127
        dark = imgs <= 50
        mid = (bright | dark) ^ True
        red = imgs[:, :, 0]
        green = imgs[:, :, 1]
        return (bright, dark, mid, imgs * bright, imgs * mid + dark * 255,
                red == green, red != green, red < green, red >= green,
                math.clamp(imgs * 1.5 - 40, 0, 255), math.sqrt(imgs) * 16,
                math.max(red, green) - math.min(red, green), math.abs(red - green))
    return pipe()


def test_masks_and_comparisons_on_photos_match_dali():
    mine, ref = both(masking_example, photos(4))
    assert_same(mine, ref, rtol=1e-6, atol=1e-4)
    assert [o.dtype for o in mine[:9]] == [np.bool_] * 3 + [np.uint8, np.int32] + [np.bool_] * 4
    for i in range(4):
        np.testing.assert_array_equal(mine[3][i] > 127, mine[0][i] & (mine[3][i] > 0))


# ======================================================================= indexing and slicing
# DALI's guide "Indexing and Slicing".

def sizes_example(fn, types, math, pipeline_def, newaxis, files):
    @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=SEED)
    def pipe():
        jpegs, _ = fn.readers.file(files=files)
        images = fn.decoders.image(jpegs)
        sizes = fn.shapes(images)  # height, width, channels
        return sizes[0], sizes[1], sizes[-1], sizes[-2], sizes
    return pipe()


def test_constant_and_negative_indices_match_dali():
    files = photos(4)
    mine, ref = both(sizes_example, files)
    assert_same(mine, ref)
    for i in range(len(files)):
        h, w, c = mine[4][i]
        assert (mine[0][i], mine[1][i], mine[2][i], mine[3][i]) == (h, w, c, w)
        assert mine[0][i].shape == ()


def random_byte_example(fn, types, math, pipeline_def, newaxis, files, fractions=None,
                        shape_method=False):
    @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=SEED)
    def pipe():
        raw_files, _ = fn.readers.file(files=files)
        length = raw_files.shape()[0] if shape_method else fn.shapes(raw_files)[0]
        if fractions is None:
            random_01 = fn.random.uniform(range=(0, 1))
        else:
            random_01 = fn.external_source(source=fixed(fractions))
        index = math.floor(random_01 * length)
        index = fn.cast(index, dtype=types.INT64)
        random_byte = raw_files[index]
        header = raw_files[:16]
        trailer = raw_files[-16:]
        middle = raw_files[length // 2:length // 2 + 4]
        return random_byte, index, header, trailer, middle, length
    return pipe()


def test_run_time_indices_and_slice_bounds_match_dali():
    files = photos(5)
    fractions = [np.float32(f) for f in (0.0, 0.25, 0.5, 0.999, 0.123)]
    mine, ref = both(random_byte_example, files, fractions)
    assert_same(mine, ref)
    for i, f in enumerate(files):
        raw = np.fromfile(f, np.uint8)
        idx = int(mine[1][i])
        assert mine[0][i] == raw[idx] and mine[0][i].shape == ()
        np.testing.assert_array_equal(mine[2][i], raw[:16])
        np.testing.assert_array_equal(mine[3][i], raw[-16:])
        np.testing.assert_array_equal(mine[4][i], raw[len(raw) // 2:len(raw) // 2 + 4])


def test_random_index_picks_the_byte_it_names_in_both():
    files = photos(5)
    for lib in (STOKER, DALI):
        byte, index, *_, length = run(random_byte_example, lib, files)
        assert index.dtype == np.int64
        for i, f in enumerate(files):
            raw = np.fromfile(f, np.uint8)
            assert 0 <= index[i] < length[i] == len(raw)
            assert byte[i] == raw[int(index[i])]


def test_shape_method_of_a_node_matches_dali():
    files = photos(3)
    fractions = [np.float32(f) for f in (0.1, 0.6, 0.9)]
    mine, ref = both(random_byte_example, files, fractions, shape_method=True)
    assert_same(mine, ref)


def multidim_example(fn, types, math, pipeline_def, newaxis, files):
    @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=SEED)
    def pipe():
        jpegs, _ = fn.readers.file(files=files)
        images = fn.decoders.image(jpegs)  # RGB images in HWC layout
        red = images[:, :, 0]
        green = images[:, :, 1]
        blue = images[:, :, 2]
        green_with_channel = images[:, :, 1:2]
        letterboxed = images
        wide1 = letterboxed[20:-20, :, :]
        wide2 = letterboxed[20:-20, :]
        wide3 = letterboxed[20:-20]
        first_row = images[0]
        last_col = images[:, -1]
        return red, green, blue, green_with_channel, wide1, wide2, wide3, first_row, last_col
    return pipe()


def test_multidimensional_selection_and_layouts_match_dali():
    files = photos(4)
    mine, ref = both(multidim_example, files)
    assert_same(mine, ref)
    assert [o.layout for o in mine] == ["HW", "HW", "HW", "HWC", "HWC", "HWC", "HWC", "WC",
                                        "HC"]
    for i in range(len(files)):
        img = np.dstack([mine[0][i], mine[1][i], mine[2][i]])
        np.testing.assert_array_equal(mine[3][i], img[:, :, 1:2])
        np.testing.assert_array_equal(mine[4][i], img[20:-20])
        np.testing.assert_array_equal(mine[5][i], mine[4][i])
        np.testing.assert_array_equal(mine[6][i], mine[4][i])
        np.testing.assert_array_equal(mine[7][i], img[0])
        np.testing.assert_array_equal(mine[8][i], img[:, -1])


def new_axes_and_steps(fn, types, math, pipeline_def, newaxis, images, channels):
    @pipeline_def(batch_size=len(images), num_threads=2, device_id=None, seed=SEED)
    def pipe():
        image = fn.external_source(source=fixed(images), layout="HWC")
        channel = fn.external_source(source=fixed(channels))
        grayscale = image[:, :, channel]            # a per-sample index
        trailing_channel = grayscale[:, :, newaxis]
        leading_channel = grayscale[newaxis]
        single_frame_video = image[newaxis("F")]
        mirrored = image[:, ::-1]
        bgr = image[:, :, ::-1]
        every_other_column = image[:, 1::2]
        return (grayscale, trailing_channel, leading_channel, single_frame_video, mirrored,
                bgr, every_other_column)
    return pipe()


def test_new_axes_strided_slices_and_per_sample_indices_match_dali():
    images = _small_photos(5)
    channels = [np.int64(c) for c in (0, 2, 1, 2, 0)]
    mine, ref = both(new_axes_and_steps, images, channels)
    assert_same(mine, ref)
    # An unnamed new axis leaves the layout empty; a named one names its axis.
    assert [o.layout for o in mine] == ["HW", "", "", "FHWC", "HWC", "HWC", "HWC"]
    for i, (img, c) in enumerate(zip(images, channels)):
        gray = img[:, :, c]
        for k, want in enumerate([gray, gray[:, :, None], gray[None], img[None], img[:, ::-1],
                                  img[:, :, ::-1], img[:, 1::2]]):
            np.testing.assert_array_equal(mine[k][i], want)


def ellipsis_and_none(fn, types, math, pipeline_def, newaxis, images, spelled_out):
    @pipeline_def(batch_size=len(images), num_threads=2, device_id=None, seed=SEED)
    def pipe():
        image = fn.external_source(source=fixed(images), layout="HWC")
        if spelled_out:     # DALI has no `...` and reads None as `:`
            return image[:, :, 0], image[:, :, ::-1], image[newaxis], image[:, :, newaxis, 1]
        return image[..., 0], image[..., ::-1], image[None], image[..., None, 1]
    return pipe()


def test_ellipsis_and_none_equal_dalis_spelled_out_subscripts():
    images = _small_photos(3)
    mine = run(ellipsis_and_none, STOKER, images, False)
    ref = run(ellipsis_and_none, DALI, images, True)
    assert_same(mine, ref)
    assert [o.layout for o in mine] == ["HW", "HWC", "", ""]
