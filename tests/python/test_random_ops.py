"""random.beta, random.choice and the shape / dtype / values arguments of random.uniform,
normal and coin_flip. The distributions are checked statistically against SciPy / NumPy (stoker
and DALI use different generators, so their draws differ); shapes, dtypes and argument handling
against DALI 2.4; the draws against themselves under other thread counts."""
import numpy as np
import pytest
from scipy import stats

from stoker import fn, pipeline_def, types


class _Stoker:
    fn, types, pipeline_def = fn, types, staticmethod(pipeline_def)


def run_with(lib, make, batch_size=4, num_threads=2, seed=11, data=None):
    @lib.pipeline_def(batch_size=batch_size, num_threads=num_threads, device_id=None, seed=seed)
    def pipe():
        if data is None:
            return make(lib.fn, lib.types)
        return make(lib.fn, lib.types, lib.fn.external_source(source=lambda: data))
    p = pipe()
    if lib is not _Stoker:
        p.build()
    outs = p.run()
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    return [[np.array(t[i]) for i in range(len(t))] for t in outs]


def run(make, **kw):
    return run_with(_Stoker, make, **kw)


def run_dali(make, **kw):
    return run_with(pytest.importorskip("nvidia.dali"), make, **kw)


def error_of(make, **kw):
    with pytest.raises((ValueError, TypeError)) as e:
        run(make, **kw)
    return str(e.value)


def draws(make, n_batches=1, **kw):
    return np.concatenate([np.ravel(s) for s in run(make, **kw)[0]])


# ---------------------------------------------------------------- beta

@pytest.mark.parametrize("a,b", [(1.0, 1.0), (0.5, 0.5), (2.0, 3.0), (0.3, 2.0), (5.0, 0.8), (20.0, 40.0)])
def test_beta_distribution(a, b):
    x = draws(lambda fn, types: fn.random.beta(alpha=a, beta=b, shape=[20000]), batch_size=2)
    assert x.dtype == np.float32 and ((x >= 0) & (x <= 1)).all()
    assert abs(x.mean() - stats.beta.mean(a, b)) < 5 * stats.beta.std(a, b) / np.sqrt(x.size)
    np.testing.assert_allclose(x.var(), stats.beta.var(a, b), rtol=0.05)
    assert stats.kstest(x, stats.beta(a, b).cdf).pvalue > 1e-3


def test_beta_per_sample_parameters_and_float64():
    alphas = [np.float32(0.5), np.float32(4.0)]

    def make(fn, types, alpha):
        return fn.random.beta(alpha=alpha, beta=2.0, shape=[20000], dtype=types.FLOAT64)
    out, = run(make, batch_size=2, data=alphas)
    for x, a in zip(out, [0.5, 4.0]):
        assert x.dtype == np.float64
        assert abs(x.mean() - a / (a + 2)) < 0.01


def test_beta_shapes_same_as_dali():
    def make(fn, types):
        like = fn.zeros(shape=[2, 2])
        return (fn.random.beta(), fn.random.beta(alpha=2, beta=3, shape=[2, 3]),
                fn.random.beta(dtype=types.FLOAT64, shape=2), fn.random.beta(like))
    ours, theirs = run(make), run_dali(make)
    for a, b in zip(ours, theirs):
        assert [(x.dtype, x.shape) for x in a] == [(y.dtype, y.shape) for y in b]


@pytest.mark.parametrize("kw,msg", [
    (dict(alpha=-1.0), "argument 'alpha' must be a positive finite number, got -1.000000 for sample 0."),
    (dict(beta=0.0), "argument 'beta' must be a positive finite number, got 0.000000 for sample 0."),
    (dict(dtype=types.INT32), "argument 'dtype' must be float32 or float64 (draws lie in [0, 1]), got int32."),
])
def test_beta_errors(kw, msg):
    err = error_of(lambda fn, types: fn.random.beta(**kw))
    assert err.startswith("fn.random.beta (test_random_ops.py:") and err.endswith(msg), err


# ---------------------------------------------------------------- choice

def chi2_ok(values, support, p):
    counts = np.array([(values == v).sum() for v in support])
    assert counts.sum() == values.size
    expected = np.asarray(p, np.float64) * values.size
    keep = expected > 0
    assert (counts[~keep] == 0).all()
    assert stats.chisquare(counts[keep], expected[keep]).pvalue > 1e-3


def test_choice_of_a_number():
    x = draws(lambda fn, types: fn.random.choice(5, shape=[20000]), batch_size=2)
    assert x.dtype == np.int32
    chi2_ok(x, range(5), [0.2] * 5)


def test_choice_of_values_with_probabilities():
    p = [0.1, 0.2, 0.0, 0.7]
    x = draws(lambda fn, types: fn.random.choice([10, 20, 30, 40], p=p, shape=[20000]), batch_size=2)
    chi2_ok(x, [10, 20, 30, 40], p)
    x = draws(lambda fn, types: fn.random.choice(np.array([1.5, 2.5], np.float32), shape=[10000]))
    assert x.dtype == np.float32
    chi2_ok(x, [1.5, 2.5], [0.5, 0.5])


def test_choice_of_rows_and_per_sample_inputs():
    rows = np.array([[1, 2], [3, 4], [5, 6]], np.int16)
    out, = run(lambda fn, types: fn.random.choice(rows, shape=[3]))
    for s in out:
        assert s.shape == (3, 2) and s.dtype == np.int16
        assert all(any((r == row).all() for row in rows) for r in s)
    ps = [np.array([0.0, 1.0], np.float32), np.array([1.0, 0.0], np.float32)]
    out, = run(lambda fn, types, p: fn.random.choice(2, p=p, shape=[50]), batch_size=2, data=ps)
    assert (out[0] == 1).all() and (out[1] == 0).all()


def test_choice_shapes_same_as_dali():
    def make(fn, types):
        return (fn.random.choice(5), fn.random.choice(5, shape=[4]), fn.random.choice([10, 20, 30], shape=4),
                fn.random.choice([1.5, 2.5], shape=[2, 2]), fn.random.choice(np.array([1, 2, 3], np.uint8)),
                fn.random.choice(np.array([[1, 2], [3, 4]], np.int32)),
                fn.random.choice(3, fn.zeros(shape=[2, 2])),
                fn.random.choice(np.int64(4), shape=[3]))
    ours, theirs = run(make), run_dali(make)
    for a, b in zip(ours, theirs):
        assert [(x.dtype, x.shape) for x in a] == [(y.dtype, y.shape) for y in b]


@pytest.mark.parametrize("args,kw,msg", [
    ((3,), dict(p=[0.5, 0.1, 0.1]), "argument 'p' must sum to 1, got a sum of 0.700000 for sample 0."),
    ((3,), dict(p=[0.5, 0.5]), "argument 'p' has 2 probabilities for sample 0, which has 3 values to "
                               "choose from; give one per value."),
    ((2,), dict(p=[1.5, -0.5]), "argument 'p' must be probabilities in [0, 1], got 1.500000 at index 0 "
                                "for sample 0."),
    ((0,), {}, "sample 0 has the number 0 to choose from; there must be at least one."),
    ((-3,), {}, "sample 0 has the number -3 to choose from; there must be at least one."),
    ((np.zeros((0,), np.int32),), {}, "sample 0 has 0 values to choose from; there must be at least one."),
    ((3.0,), {}, "a scalar input is the number of values to choose from and must be an integer, got "
                 "float32; give a list of values to choose among them instead."),
])
def test_choice_errors(args, kw, msg):
    err = error_of(lambda fn, types: fn.random.choice(*args, **kw))
    assert err.startswith("fn.random.choice (test_random_ops.py:") and err.endswith(msg), err


# ---------------------------------------------------------------- uniform, normal, coin_flip

def test_shape_and_values_as_per_sample_tensors():
    shapes = [np.array([i + 1], np.int32) for i in range(3)]
    out, = run(lambda fn, types, s: fn.random.uniform(shape=s), batch_size=3, data=shapes)
    assert [x.shape for x in out] == [(1,), (2,), (3,)]
    vals = [np.array([5.0, 6.0], np.float32), np.array([-1.0], np.float32), np.array([7.0, 8.0], np.float32)]
    out, = run(lambda fn, types, v: fn.random.uniform(values=v, shape=[200]), batch_size=3, data=vals)
    assert set(out[0]) == {5.0, 6.0} and set(out[1]) == {-1.0} and set(out[2]) == {7.0, 8.0}
    out, = run(lambda fn, types, s: fn.random.normal(shape=s, dtype=types.INT16), batch_size=3, data=shapes)
    assert [x.shape for x in out] == [(1,), (2,), (3,)] and out[0].dtype == np.int16


def test_dtypes_and_shapes_same_as_dali():
    def make(fn, types):
        return (fn.random.uniform(), fn.random.uniform(range=[0, 10], dtype=types.INT32, shape=5),
                fn.random.uniform(values=[1, 2], shape=3), fn.random.normal(dtype=types.INT16, stddev=100, shape=5),
                fn.random.normal(shape=[2, 3]), fn.random.coin_flip(), fn.random.coin_flip(dtype=types.BOOL, shape=5),
                fn.random.coin_flip(dtype=types.UINT8, shape=[2, 2]), fn.random.uniform(fn.zeros(shape=[3, 1])))
    ours, theirs = run(make), run_dali(make)
    for a, b in zip(ours, theirs):
        assert [(x.dtype, x.shape) for x in a] == [(y.dtype, y.shape) for y in b]


def test_distributions_of_uniform_normal_coin_flip():
    u, n, c, v = [np.concatenate([s.ravel() for s in o]) for o in run(lambda fn, types: (
        fn.random.uniform(range=[-2, 3], shape=[20000]), fn.random.normal(mean=1, stddev=2, shape=[20000]),
        fn.random.coin_flip(probability=0.3, shape=[20000]), fn.random.uniform(values=[1, 5, 9], shape=[20000])),
        batch_size=2)]
    assert stats.kstest(u, stats.uniform(-2, 5).cdf).pvalue > 1e-3
    assert stats.kstest(n, stats.norm(1, 2).cdf).pvalue > 1e-3
    chi2_ok(c, [0, 1], [0.7, 0.3])
    chi2_ok(v, [1, 5, 9], [1 / 3] * 3)


# ---------------------------------------------------------------- determinism

def test_same_seed_same_draws_whatever_the_thread_count():
    def make(fn, types):
        return (fn.random.beta(alpha=0.7, beta=2, shape=[50]), fn.random.choice([1, 2, 3], p=[0.2, 0.3, 0.5], shape=[50]),
                fn.random.uniform(values=[1, 2, 3], shape=[7]), fn.random.choice(10, shape=[5]))
    one = run(make, batch_size=6, num_threads=1, seed=123)
    four = run(make, batch_size=6, num_threads=4, seed=123)
    other = run(make, batch_size=6, num_threads=4, seed=124)
    for a, b, c in zip(one, four, other):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
        assert any((x != z).any() for x, z in zip(a, c))
    # samples of one batch differ from each other
    assert not np.array_equal(one[0][0], one[0][1])
