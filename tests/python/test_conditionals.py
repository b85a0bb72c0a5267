"""@pipeline_def(enable_conditionals=True): `if`/`elif`/`else`, `and`, `or`, `not` on per-sample
DataNodes, run in stoker and in DALI 2.4 on the same fixed inputs (external_source, nothing
random in what is compared), against NumPy, and the errors whole."""
import pathlib

import numpy as np
import pytest

from _dali_ref import assert_same_outputs, line_of as _line_of, real_dali as _dali, run_outputs
from stoker import fn, pipeline_def, types
from stoker.pipeline import do_not_convert

IMAGENET = pathlib.Path(__file__).resolve().parents[3] / "shared" / "testdata" / "imagenet-sample"
HERE = pathlib.Path(__file__).name
N = 6


def _photos(n, size=48):
    from PIL import Image
    files = sorted(IMAGENET.rglob("*.jpg"))[:n]
    if len(files) < n:
        pytest.skip("imagenet-sample not found")
    return [np.asarray(Image.open(f).convert("RGB").resize((size + 4 * i, size)))
            for i, f in enumerate(files)]


STOKER = (fn, types, pipeline_def)
PRED = [np.array(v) for v in (True, False, False, True, True, False)]
LABELS = [np.array(v, np.int32) for v in (0, 1, 2, 1, 0, 3)]


def _run(lib, build, datas, layouts=None, threads=2, seed=5, iterations=1, **kw):
    """build(fn, types, *external_sources) -> node(s), in a pipeline with conditionals, fed
    `datas` (one list of arrays per input); per iteration, per output: ([samples], layout,
    dtype)."""
    fn_, types_, pdef = lib
    layouts = layouts or [None] * len(datas)

    @pdef(batch_size=len(datas[0]), num_threads=threads, device_id=None, seed=seed,
          enable_conditionals=True, **kw)
    def pipe():
        xs = [fn_.external_source(source=(lambda d: lambda: d)(d), layout=l) for d, l in zip(datas, layouts)]
        out = build(fn_, types_, *xs)
        return tuple(out) if isinstance(out, (list, tuple)) else out

    p = pipe()
    return run_outputs(p, iterations)


def _same_as_dali(build, datas, layouts=None):
    mine = _run(STOKER, build, datas, layouts)
    ref = _run(_dali(), build, datas, layouts)
    assert_same_outputs(mine, ref)
    return mine


# ---------------------------------------------------------------- DALI's tutorial, fixed inputs

def flip_or_keep(fn, types, images, pred):
    if pred:
        out = fn.flip(images, horizontal=1)
    else:
        out = images
    return fn.cast(out, dtype=types.FLOAT) * 0.5, pred


def test_if_else_flip_matches_dali_and_numpy():
    photos = _photos(N)
    (out, layout, dtype), _ = _same_as_dali(flip_or_keep, [photos, PRED], ["HWC", None])
    assert (layout, dtype) == ("HWC", np.float32)
    for o, img, p in zip(out, photos, PRED):
        np.testing.assert_array_equal(o, (img[:, ::-1] if p else img).astype(np.float32) * 0.5)


def rotate_some(fn, types, images, pred):
    if pred:
        images = fn.rotate(images, angle=90, fill_value=0)
    return images


def test_rotate_in_a_branch_matches_dali_and_numpy():
    photos = _photos(N)
    out, layout, dtype = _same_as_dali(rotate_some, [photos, PRED], ["HWC", None])[0]
    assert (layout, dtype) == ("HWC", np.uint8)
    for o, img, p in zip(out, photos, PRED):
        np.testing.assert_array_equal(o, np.rot90(img) if p else img)


def by_label(fn, types, images, label):
    if label == 0:
        out = fn.flip(images, horizontal=1)
    elif label == 1:
        out = fn.flip(images, vertical=1, horizontal=0)
    elif label == 2:
        out = fn.flip(images, horizontal=1, vertical=1)
    else:
        out = images
    return out, label + 0


def test_if_elif_else_on_labels_matches_dali_and_numpy():
    photos = _photos(N)
    (out, layout, _), (labels, _, _) = _same_as_dali(by_label, [photos, LABELS], ["HWC", None])
    assert layout == "HWC"
    want = {0: lambda a: a[:, ::-1], 1: lambda a: a[::-1], 2: lambda a: a[::-1, ::-1],
            3: lambda a: a}
    for o, img, l in zip(out, photos, LABELS):
        np.testing.assert_array_equal(o, want[int(l)](img))
    assert [int(l) for l in labels] == [int(l) for l in LABELS]


def nested(fn, types, x, label, pred):
    if pred:
        if label > 0:
            y = x * 10
        else:
            y = x * 100
        z = y + 1
    else:
        z = x - 1
        if label == 3:
            z = z * 0
    return z


def test_nested_ifs_match_dali():
    xs = [np.arange(3, dtype=np.int32) + i for i in range(N)]
    (out, _, _), = _same_as_dali(nested, [xs, LABELS, PRED])
    for o, x, l, p in zip(out, xs, LABELS, PRED):
        want = (x * (10 if l > 0 else 100) + 1) if p else ((x - 1) * (0 if l == 3 else 1))
        np.testing.assert_array_equal(o, want)


def logic(fn, types, label, pred):
    big = label > 1
    both = pred and big
    either = pred or big
    neither = not (pred or big)
    if pred and not big:
        tag = label * 0 + 1
    elif either:
        tag = label * 0 + 2
    else:
        tag = label * 0 + 3
    return both, either, neither, tag, not label, pred and True, big or False


def test_and_or_not_match_dali():
    outs = _same_as_dali(logic, [LABELS, PRED])
    both, either, neither, tag, not_label, same_pred, same_big = [o[0] for o in outs]
    for i, (l, p) in enumerate(zip(LABELS, PRED)):
        b = bool(l > 1)
        assert (bool(both[i]), bool(either[i]), bool(neither[i])) == (p and b, p or b,
                                                                      not (p or b))
        assert int(tag[i]) == (1 if p and not b else 2 if (p or b) else 3)
        assert bool(not_label[i]) == (l == 0)
        assert (bool(same_pred[i]), bool(same_big[i])) == (p, b)
    assert [o[2] for o in outs[:3]] == [np.bool_] * 3


def returns_and_constants(fn, types, x, pred):
    if pred:
        c = 7                       # a number merged with a DataNode: a constant
    else:
        c = x
    if pred:
        return c + 1, x
    return c - 1, x


def test_returns_and_constants_match_dali():
    xs = [np.array(i * 10, np.int32) for i in range(N)]
    (out, _, dtype), _ = _same_as_dali(returns_and_constants, [xs, PRED])
    assert dtype == np.int32
    assert [int(o) for o in out] == [8 if p else int(x) - 1 for x, p in zip(xs, PRED)]


def structures_and_python_function(fn, types, x, pred):
    if pred:
        t = (x + 1, {"a": x * 2})
        y = fn.python_function(x, function=lambda a: a[::-1].copy())
    else:
        t = (x - 1, {"a": x * 3})
        y = fn.python_function(x, x, function=lambda a, b: a + b, batch_processing=False)
    return t[0], t[1]["a"], y


def test_tuples_dicts_and_python_function_in_branches_match_dali():
    xs = [np.arange(3, dtype=np.int32) + i for i in range(N)]
    (t0, _, _), (ta, _, _), (y, _, _) = _same_as_dali(structures_and_python_function, [xs, PRED])
    for a, b, c, x, p in zip(t0, ta, y, xs, PRED):
        np.testing.assert_array_equal(a, x + 1 if p else x - 1)
        np.testing.assert_array_equal(b, x * 2 if p else x * 3)
        np.testing.assert_array_equal(c, x[::-1] if p else x + x)


def helpers_and_python_ifs(fn, types, x, pred):
    def scale(v, factor):
        if factor > 1:          # a Python condition: plain Python
            return v * factor
        return v

    def pick(v):
        if pred:                # a DataNode condition inside a helper
            w = scale(v, 3)
        else:
            w = scale(v, 1)
        return w
    return pick(x), (x + 1 if 2 > 1 else x)


def test_helpers_and_python_conditions_match_dali():
    xs = [np.arange(2, dtype=np.float32) + i for i in range(N)]
    (out, _, _), _ = _same_as_dali(helpers_and_python_ifs, [xs, PRED])
    for o, x, p in zip(out, xs, PRED):
        np.testing.assert_array_equal(o, x * 3 if p else x)


def one_side_only(fn, types, x, pred):
    if pred:
        unused = x * 2  # assigned in one branch and not used after: fine, as in DALI
    return x


def all_or_nothing(fn, types, images, pred):
    if pred:
        out = fn.flip(images)
    else:
        out = images
    return out


def test_branches_no_sample_takes():
    photos = _photos(4)
    for preds in ([np.array(False)] * 4, [np.array(True)] * 4):
        (out, layout, _), = _same_as_dali(all_or_nothing, [photos, preds], ["HWC", None])
        assert layout == "HWC"
        for o, img, p in zip(out, photos, preds):
            np.testing.assert_array_equal(o, img[:, ::-1] if p else img)
    xs = [np.arange(3, dtype=np.int32)] * N
    (out, _, _), = _same_as_dali(one_side_only, [xs, PRED])
    np.testing.assert_array_equal(np.stack(out), np.stack(xs))


def test_plain_python_ifs_and_call_time_flag():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe(double):
        x = fn.external_source(source=lambda: [np.float32(1), np.float32(2)])
        if double:
            x = x * 2
        return x

    for double, want in ((True, [2, 4]), (False, [1, 2])):
        (out,) = pipe(double, enable_conditionals=True).run()
        assert [float(v) for v in out.as_array()] == want


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # DALI's __del__
def test_pipeline_takes_no_enable_conditionals_as_in_dali():
    from stoker import Pipeline
    with pytest.raises(TypeError):
        Pipeline(batch_size=1, enable_conditionals=True)
    _dali()
    import nvidia.dali as real
    with pytest.raises(TypeError):
        real.Pipeline(batch_size=1, enable_conditionals=True)


# ---------------------------------------------------------------- determinism and checkpoints

def noisy(fn, types, x, pred):
    if pred:
        out = fn.random.uniform(x, range=[0, 1])       # drawn in the branch, per sample
        coin = fn.random.coin_flip(dtype=types.INT32)  # no inputs: drawn for the whole batch
    else:
        out = x * 0 - 1
        coin = fn.cast(pred, dtype=types.INT32) - 1
    return out, coin


def _noisy_run(preds, threads, iterations=3):
    xs = [np.zeros(4, np.float32)] * N
    return _run(STOKER, noisy, [xs, preds], threads=threads, iterations=iterations)


def test_batch_permutation_in_a_branch_permutes_that_branch():
    # As in DALI: an operator without inputs in a branch works on the branch's samples, so the
    # permutation is of the samples that took it (not of the whole batch).
    ids = [np.array([i], np.int32) for i in range(8)]
    take = [np.array(i % 3 == 0) for i in range(8)]  # samples 0, 3, 6

    @pipeline_def(batch_size=8, num_threads=2, device_id=None, seed=4, enable_conditionals=True)
    def pipe(no_fixed_points):
        x = fn.external_source(source=lambda: ids)
        k = fn.external_source(source=lambda: take)
        if k:
            y = fn.permute_batch(x, indices=fn.batch_permutation(no_fixed_points=no_fixed_points))
        else:
            y = x * 10
        return y

    for nfp in (False, True):
        p = pipe(nfp)
        p.build()
        orders = set()
        for _ in range(6):
            out = [int(a[0]) for a in p.run()[0]]
            branch = [out[0], out[3], out[6]]
            assert sorted(branch) == [0, 3, 6]
            assert [out[i] for i in range(8) if i % 3] == [10 * i for i in range(8) if i % 3]
            if nfp:
                assert all(b != i for b, i in zip(branch, (0, 3, 6)))
            orders.add(tuple(branch))
        assert len(orders) > 1  # random, not one fixed order


def test_draws_do_not_depend_on_the_split_or_threads():
    mixed = _noisy_run(PRED, threads=1)
    for it_a, it_b in zip(mixed, _noisy_run(PRED, threads=3)):
        for (sa, _, _), (sb, _, _) in zip(it_a, it_b):
            for a, b in zip(sa, sb):
                np.testing.assert_array_equal(a, b)
    everyone = _noisy_run([np.array(True)] * N, threads=2)
    for it_mixed, it_all in zip(mixed, everyone):
        for (s_mixed, _, _), (s_all, _, _) in zip(it_mixed, it_all):
            for i, p in enumerate(PRED):
                if p:  # the sample draws the same, whichever samples share its branch
                    np.testing.assert_array_equal(s_mixed[i], s_all[i])
    values = np.stack([s for it in mixed for s in it[0][0]])
    assert ((values >= 0) & (values < 1) | (values == -1)).all() and len(np.unique(values)) > 10


def test_tutorial_pipeline_on_files_is_deterministic():
    if not IMAGENET.is_dir():
        pytest.skip("imagenet-sample not found")

    @pipeline_def(batch_size=8, device_id=None, seed=42, enable_conditionals=True)
    def tutorial():
        encoded, _ = fn.readers.file(file_root=str(IMAGENET), random_shuffle=True)
        decoded = fn.decoders.image(encoded, output_type=types.RGB)
        do_rotate = fn.random.coin_flip(probability=0.25, dtype=types.BOOL)
        angle = fn.random.uniform(range=(10, 30))
        if do_rotate:
            result = fn.rotate(decoded, angle=angle, fill_value=0)
        else:
            result = decoded
        return fn.resize(result, resize_x=64, resize_y=64), do_rotate

    runs = []
    for threads in (1, 3):
        p = tutorial(num_threads=threads)
        runs.append([[np.array(o.as_array()) for o in p.run()] for _ in range(3)])
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
    rotated = np.concatenate([r[1] for r in runs[0]])
    assert rotated.dtype == np.bool_ and 0 < rotated.sum() < len(rotated)


def test_checkpoint_restores_conditional_pipelines():
    xs = [np.zeros(4, np.float32)] * N

    @pipeline_def(batch_size=N, num_threads=2, device_id=None, seed=11, enable_conditionals=True,
                  enable_checkpointing=True)
    def pipe():
        x = fn.external_source(source=lambda i: xs, batch=True)
        pred = fn.external_source(source=lambda i: PRED, batch=True)
        return noisy(fn, types, x, pred)

    p = pipe()
    p.run()
    ckpt = p.checkpoint()
    want = [[np.array(o.as_array()) for o in p.run()] for _ in range(2)]
    q = pipe(checkpoint=ckpt)
    got = [[np.array(o.as_array()) for o in q.run()] for _ in range(2)]
    for w, g in zip(want, got):
        for a, b in zip(w, g):
            np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------- errors, whole

def _error(build, datas, exc):
    with pytest.raises(exc) as e:
        _run(STOKER, build, datas)
    return str(e.value)


def one_branch_used_after(fn, types, x, pred):
    if pred:
        out = x + 10
    return out


def test_variable_assigned_in_one_branch_and_used_after():
    xs = [np.int32(i) for i in range(N)]
    line = _line_of("if pred:", one_branch_used_after)
    assert _error(one_branch_used_after, [xs, PRED], ValueError) == (
        f"`if` at {HERE}:{line}: variable 'out' is used after this `if` on a DataNode but is not "
        "assigned in its `else` branch (nor before the `if`). Every variable used after it is "
        "merged from both branches: assign 'out' in the `else` branch too, or before the `if`.")


def return_in_one_branch(fn, types, x, pred):
    if pred:
        return x


def test_return_in_one_branch_only():
    xs = [np.int32(i) for i in range(N)]
    line = _line_of("if pred:", return_in_one_branch)
    assert _error(return_in_one_branch, [xs, PRED], ValueError) == (
        f"`if` at {HERE}:{line}: one branch of this `if` on a DataNode returns and the `else` "
        "branch does not; with a per-sample condition both branches must return a value (or "
        "neither).")


def tuple_and_node(fn, types, x, pred):
    if pred:
        t = (x, x)
    else:
        t = x
    return t


def test_different_structures():
    xs = [np.int32(i) for i in range(N)]
    line = _line_of("if pred:", tuple_and_node)
    assert _error(tuple_and_node, [xs, PRED], ValueError) == (
        f"`if` at {HERE}:{line}: variable 't' is a tuple of 2 values in the `if` branch and a "
        "value in the `else` branch. Values merged after an `if` on a DataNode must have the "
        "same structure in both branches (tuples and lists of the same length, dicts with the "
        "same keys); their contents may differ.")


def types_differ(fn, types, x, pred):
    if pred:
        out = x + 1
    else:
        out = fn.cast(x, dtype=types.FLOAT)
    return out


def test_branches_of_different_types():
    xs = [np.int32(i) for i in range(N)]
    line = _line_of("if pred:", types_differ)
    assert _error(types_differ, [xs, PRED], TypeError) == (
        f"fn._conditional.merge ({HERE}:{line}): variable 'out' differs between the branches of "
        "this `if`: its type is int32 in the `if` branch and float32 in the `else` branch. After "
        "the `if` the values of both branches are merged into one batch, which must have one "
        "type, number of dimensions and layout; make both branches give the same (with fn.cast, "
        "fn.reshape, ...).")


ADVICE = (" Conditions and logical operands are scalars so that `if`, `and`, `or` and `not` have "
          "one meaning per sample (as in DALI). Compare (`x > 3` gives a boolean scalar), give "
          "dtype=types.BOOL where an operator has it, or reduce the data to one value; for "
          "element-wise logic on larger tensors use `&`, `|` and `== 0` instead (those evaluate "
          "both sides).")


def vector_condition(fn, types, x, pred):
    if x:
        out = x
    else:
        out = x + 1
    return out


def and_of_ints(fn, types, x, pred):
    return x and pred


def test_conditions_must_be_scalars_and_logic_booleans():
    vec = [np.array([i], np.int32) for i in range(N)]
    line = _line_of("if x:", vector_condition)
    assert _error(vector_condition, [vec, PRED], ValueError) == (
        f"fn._conditional.split ({HERE}:{line}): the condition of this `if` must be a scalar "
        "(0-d) per sample, but sample 0 has shape (1,) (1-d)." + ADVICE)
    ints = [np.int32(i) for i in range(N)]
    line = _line_of("return x and pred", and_of_ints)
    assert _error(and_of_ints, [ints, PRED], TypeError) == (
        f"fn._conditional.validate_logical ({HERE}:{line}): the left operand of `and` must be a "
        "boolean scalar per sample, got int32." + ADVICE)


def while_on_node(fn, types, x, pred):
    while pred:
        x = x + 1
    return x


def ifexp_on_node(fn, types, x, pred):
    return x + 1 if pred else x


def leak(fn, types, x, pred):
    made = []
    if pred:
        made.append(x + 1)
        y = x
    else:
        y = x
    return fn.cast(made[0], dtype=types.FLOAT)


def test_statements_that_take_no_datanode_condition():
    xs = [np.int32(i) for i in range(N)]
    for build, what, text in ((while_on_node, "the condition of a `while` loop", "while pred:"),
                              (ifexp_on_node, "a conditional expression (`a if c else b`)",
                               "return x + 1 if pred else x")):
        line = _line_of(text, build)
        assert _error(build, [xs, PRED], TypeError) == (
            f"{what} ({HERE}:{line}) cannot take a DataNode condition: stoker (as DALI) runs "
            "per-sample conditions in `if` statements and in `and`, `or` and `not` only. Write "
            "it as an `if` statement that assigns a variable in both branches.")
    line = _line_of("return fn.cast(made[0]", leak)
    if_line = _line_of("if pred:", leak)
    assert _error(leak, [xs, PRED], ValueError) == (
        f"fn.cast ({HERE}:{line}): a DataNode made inside a branch of the `if` at "
        f"{HERE}:{if_line} is used outside that branch. Only variables assigned in both "
        "branches (merged after the `if`) can be used after it; assign the value to a variable "
        "in both branches.")
    line = _line_of("    p = pipe()", _run)
    assert _error(leak_output, [xs, PRED], ValueError) == (
        f"Pipeline output 0 ({HERE}:{line}): a DataNode made inside a branch of the `if` at "
        f"{HERE}:{_line_of('if pred:', leak_output)} is used outside that branch. Only "
        "variables assigned in both branches (merged after the `if`) can be used after it; "
        "assign the value to a variable in both branches.")


def _fail_on_40(a):
    if a == 40:
        raise ValueError("forty")
    return a


def failing_in_branch(fn, types, x, pred):
    if pred:
        y = fn.python_function(x, function=_fail_on_40)
    else:
        y = x
    return y


def test_errors_in_a_branch_name_the_sample_of_the_whole_batch():
    xs = [np.int32(i * 10) for i in range(N)]
    line = _line_of("fn.python_function(x, function=_fail_on_40)", failing_in_branch)
    # Sample 4 is the third of the `if` branch's part.
    assert _error(failing_in_branch, [xs, PRED], ValueError) == (
        f"fn.python_function ({HERE}:{line}): the function raised ValueError for sample 4: forty")


def leak_output(fn, types, x, pred):
    made = []
    if pred:
        made.append(x + 1)
    return made[0]


@do_not_convert
def not_converted(x, pred):
    if pred:
        return x
    return x


def test_do_not_convert_and_without_conditionals():
    xs = [np.int32(i) for i in range(N)]
    msg = ("a DataNode has no truth value while the pipeline is being defined: `if x:`, "
           "`x and y`, `not x` on DataNodes need @pipeline_def(enable_conditionals=True) (which "
           "runs them per sample); otherwise use arithmetic or comparisons on it (e.g. `x == 3`, "
           "`a & b`).")
    assert _error(lambda fn_, t, x, p: not_converted(x, p), [xs, PRED], TypeError) == msg

    @pipeline_def(batch_size=N, num_threads=1, device_id=None)
    def plain():
        x = fn.external_source(source=lambda: xs)
        if x > 2:
            x = x + 1
        return x
    with pytest.raises(TypeError) as e:
        plain()
    assert str(e.value) == msg
