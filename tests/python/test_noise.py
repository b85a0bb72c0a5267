"""noise.gaussian, noise.salt_and_pepper and noise.shot: the deterministic cases equal DALI 2.4's
exactly on real photos; the random ones are checked through their distributions, and seeds
reproduce whatever num_threads is."""
import numpy as np
import pytest
from PIL import Image

from _dali_ref import IMAGENET, real_dali, run, stoker_lib
from stoker import fn, pipeline_def, types


@pytest.fixture(scope="module")
def photos():
    files = sorted(IMAGENET.glob("*/*.jpg"))[::40][:5]
    if len(files) < 3:
        pytest.skip("no imagenet-sample photos")
    return [np.array(Image.open(f).convert("RGB")) for f in files]


def both(build, datas, layouts=None):
    """Output 0 of stoker and of DALI for the same graph: each (samples, layout, dtype name)."""
    s = run(stoker_lib(), build, datas, layouts)[0]
    d = run(real_dali(), build, datas, layouts)[0]
    return s, d


def _const(batch):
    return lambda: batch


def run_stoker(build, datas, layouts=None, threads=2, seed=7, iterations=1):
    bs = len(datas[0])

    @pipeline_def(batch_size=bs, num_threads=threads, device_id=None, seed=seed)
    def pipe():
        xs = [fn.external_source(source=_const(d), batch=True, layout=l)
              for d, l in zip(datas, layouts or [None] * len(datas))]
        return build(fn, types, *xs)

    p = pipe()
    p.build()
    outs = [p.run()[0] for _ in range(iterations)]
    return [[np.array(o.at(i)) for i in range(len(o))] for o in outs]


# ---- gaussian

@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.float32])
@pytest.mark.parametrize("mean", [0.0, 0.5, -0.5, 1.5, -2.5, 300.0, -300.0])
def test_gaussian_stddev0_equals_dali(photos, dtype, mean):
    data = [p.astype(dtype) for p in photos[:3]]
    s, d = both(lambda fn, t, x: fn.noise.gaussian(x, mean=mean, stddev=0.0), [data], ["HWC"])
    assert s[0][0].dtype == dtype and s[1] == "HWC"
    for a, b in zip(s[0], d[0]):
        np.testing.assert_array_equal(a, b)


def test_gaussian_rounds_halves_away_from_zero_and_saturates():
    x = np.array([[0, 1, 2, -1, -2, 127, -128]], np.int8)
    out = run_stoker(lambda fn, t, a: fn.noise.gaussian(a, mean=0.5, stddev=0.0), [[x]])[0][0]
    np.testing.assert_array_equal(out, [[1, 2, 3, -1, -2, 127, -128]])  # -127.5 -> -128
    out = run_stoker(lambda fn, t, a: fn.noise.gaussian(a, mean=-0.5, stddev=0.0), [[x]])[0][0]
    np.testing.assert_array_equal(out, [[-1, 1, 2, -2, -3, 127, -128]])
    big = np.array([[2**31 - 1, -2**31]], np.int32)
    out = run_stoker(lambda fn, t, a: fn.noise.gaussian(a, mean=100.4, stddev=0.0), [[big]])[0][0]
    np.testing.assert_array_equal(out, [[2**31 - 1, -2**31 + 100]])


def test_gaussian_distribution():
    flat = [np.full((300, 300, 3), 100.0, np.float32), np.full((200, 250, 3), 100.0, np.float32)]
    out = run_stoker(lambda fn, t, a: fn.noise.gaussian(a, mean=3.0, stddev=7.0), [flat])[0]
    for o in out:
        n = o - 100.0
        assert abs(n.mean() - 3.0) < 0.1 and abs(n.std() - 7.0) < 0.1
        # Normal: about 68.3% within one sigma, 95.4% within two.
        assert abs(np.mean(np.abs(n - 3.0) < 7.0) - 0.683) < 0.01
        assert abs(np.mean(np.abs(n - 3.0) < 14.0) - 0.954) < 0.005
    # The two samples draw different noise.
    assert not np.array_equal(out[0][:200, :250], out[1])


def test_gaussian_uint8_photo(photos):
    out = run_stoker(lambda fn, t, a: fn.noise.gaussian(a, stddev=5.0), [photos[:2]])[0]
    for o, p in zip(out, photos):
        assert o.dtype == np.uint8 and o.shape == p.shape
        inside = (p > 30) & (p < 225)  # far from saturation
        n = o[inside].astype(float) - p[inside]
        assert abs(n.mean()) < 0.05 and abs(n.std() - 5.0) < 0.1
        assert np.all(n == np.round(n))


def test_gaussian_per_sample_args():
    flat = [np.full((200, 200), 50.0, np.float32)] * 3
    std = [np.array(v, np.float32) for v in (0.0, 2.0, 10.0)]
    mean = [np.array(v, np.float32) for v in (1.0, -4.0, 0.0)]
    out = run_stoker(lambda fn, t, a, s, m: fn.noise.gaussian(a, stddev=s, mean=m),
                     [flat, std, mean])[0]
    np.testing.assert_array_equal(out[0], np.full((200, 200), 51.0, np.float32))
    for o, s, m in zip(out[1:], (2.0, 10.0), (-4.0, 0.0)):
        assert abs((o - 50).mean() - m) < 0.1 and abs(o.std() - s) < 0.1


def test_seeds_reproduce_whatever_num_threads(photos):
    def build(fn, t, a):
        return fn.noise.gaussian(fn.noise.salt_and_pepper(fn.noise.shot(a, factor=3.0)), stddev=4.0)
    ref = run_stoker(build, [photos], threads=1, seed=11, iterations=2)
    for threads in (2, 4):
        again = run_stoker(build, [photos], threads=threads, seed=11, iterations=2)
        for it in range(2):
            for a, b in zip(ref[it], again[it]):
                np.testing.assert_array_equal(a, b)
    other = run_stoker(build, [photos], threads=1, seed=12, iterations=1)
    assert not np.array_equal(other[0][0], ref[0][0])
    assert not np.array_equal(ref[0][0], ref[1][0])  # each iteration draws anew
    # The operator's own seed= overrides the pipeline's.
    a = run_stoker(lambda fn, t, x: fn.noise.gaussian(x, seed=5), [photos[:1]], seed=1)[0][0]
    b = run_stoker(lambda fn, t, x: fn.noise.gaussian(x, seed=5), [photos[:1]], seed=2)[0][0]
    np.testing.assert_array_equal(a, b)


# ---- salt and pepper

@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.uint32, np.float32])
def test_salt_and_pepper_deterministic_cases_equal_dali(photos, dtype):
    data = [p.astype(dtype) for p in photos[:3]]
    for kw in (dict(prob=0.0), dict(prob=1.0, salt_vs_pepper=1.0), dict(prob=1.0, salt_vs_pepper=0.0),
               dict(prob=1.0, salt_vs_pepper=1.0, salt_val=2.5), dict(prob=1.0, salt_vs_pepper=0.0, pepper_val=-0.5),
               dict(prob=0.0, per_channel=True), dict(prob=1.0, salt_vs_pepper=1.0, per_channel=True)):
        s, d = both(lambda fn, t, x: fn.noise.salt_and_pepper(x, **kw), [data], ["HWC"])
        for a, b in zip(s[0], d[0]):
            assert a.dtype == dtype
            np.testing.assert_array_equal(a, b)


def test_salt_and_pepper_defaults_and_proportions(photos):
    flat = [np.full((300, 300, 3), 100, np.uint8)]
    o = run_stoker(lambda fn, t, a: fn.noise.salt_and_pepper(a, prob=0.3, salt_vs_pepper=0.25), [flat],
                   ["HWC"])[0][0]
    assert set(np.unique(o)) == {0, 100, 255}
    # One draw per pixel: its three channels agree.
    assert np.all((o == o[..., :1]).all(-1))
    px = o[..., 0]
    assert abs(np.mean(px != 100) - 0.3) < 0.01
    assert abs(np.mean(px == 255) - 0.3 * 0.25) < 0.005
    assert abs(np.mean(px == 0) - 0.3 * 0.75) < 0.01
    # per_channel: values corrupted independently.
    o = run_stoker(lambda fn, t, a: fn.noise.salt_and_pepper(a, prob=0.3, per_channel=True), [flat],
                   ["HWC"])[0][0]
    assert abs(np.mean(o != 100) - 0.3) < 0.01
    assert not np.all((o == o[..., :1]).all(-1))
    assert abs(np.mean((o != 100).all(-1)) - 0.3 ** 3) < 0.005
    # Floats: salt 1, pepper -1.
    o = run_stoker(lambda fn, t, a: fn.noise.salt_and_pepper(a, prob=0.5), [[f.astype(np.float32) for f in flat]],
                   ["HWC"])[0][0]
    assert set(np.unique(o)) == {-1.0, 1.0, 100.0}
    # Kept values are the input's.
    photo = np.clip(photos[0], 1, 254)
    o = run_stoker(lambda fn, t, a: fn.noise.salt_and_pepper(a, prob=0.2), [[photo]], ["HWC"])[0][0]
    kept = ~((o == 0) | (o == 255)).all(-1)
    np.testing.assert_array_equal(o[kept], photo[kept])
    assert abs(np.mean(~kept) - 0.2) < 0.01


def test_salt_and_pepper_channel_first_and_no_channels():
    chw = [np.full((3, 200, 200), 7, np.int16)]
    o = run_stoker(lambda fn, t, a: fn.noise.salt_and_pepper(a, prob=0.4), [chw], ["CHW"])[0][0]
    assert np.all((o == o[:1]).all(0))
    assert abs(np.mean(o[0] != 7) - 0.4) < 0.02
    assert set(np.unique(o)) == {-32768, 7, 32767}
    # No C in the layout: every value draws on its own (DALI refuses this layout).
    hw = [np.full((200, 200), 7, np.uint8)]
    o = run_stoker(lambda fn, t, a: fn.noise.salt_and_pepper(a, prob=0.4), [hw], ["HW"])[0][0]
    assert abs(np.mean(o != 7) - 0.4) < 0.02


def test_salt_and_pepper_values_saturate():
    # DALI wraps out-of-range values around (300.7 -> 44 in uint8); stoker saturates.
    x = [np.full((10, 10, 3), 100, np.uint8)]
    o = run_stoker(lambda fn, t, a: fn.noise.salt_and_pepper(a, prob=1.0, salt_vs_pepper=1.0, salt_val=300.7),
                   [x], ["HWC"])[0][0]
    assert np.all(o == 255)
    o = run_stoker(lambda fn, t, a: fn.noise.salt_and_pepper(a, prob=1.0, salt_vs_pepper=0.0, pepper_val=-3.5),
                   [x], ["HWC"])[0][0]
    assert np.all(o == 0)


@pytest.mark.parametrize("dtype", [np.uint64, np.int64])
def test_salt_and_pepper_64_bit_extremes(dtype):
    # The default salt and pepper are the type's extremes; 2^64 - 1 and 2^63 - 1 are not doubles,
    # and the value stays the extreme (not 0 or the other end) for all-salt and all-pepper.
    info = np.iinfo(dtype)
    x = [np.full((4, 5, 3), 7, dtype)]
    for svp, want in ((1.0, info.max), (0.0, info.min)):
        o = run_stoker(lambda fn, t, a: fn.noise.salt_and_pepper(a, prob=1.0, salt_vs_pepper=svp),
                       [x], ["HWC"])[0][0]
        assert o.dtype == dtype and np.all(o == want), (svp, np.unique(o))


def test_salt_and_pepper_per_sample_prob():
    x = [np.full((200, 200, 3), 9, np.uint8)] * 3
    probs = [np.array(v, np.float32) for v in (0.0, 0.5, 1.0)]
    out = run_stoker(lambda fn, t, a, p: fn.noise.salt_and_pepper(a, prob=p), [x, probs], ["HWC", None])[0]
    assert np.all(out[0] == 9)
    assert abs(np.mean(out[1] != 9) - 0.5) < 0.02
    assert np.all(out[2] != 9)


# ---- shot

def test_shot_large_factor_equals_dali(photos):
    # Poisson means below 3e-10: every count is 0, as in DALI.
    for dtype in (np.uint8, np.int16, np.float32):
        data = [p.astype(dtype) for p in photos[:3]]
        s, d = both(lambda fn, t, x: fn.noise.shot(x, factor=1e12), [data], ["HWC"])
        for a, b in zip(s[0], d[0]):
            assert a.dtype == dtype
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("factor,value", [(2.5, 50.0), (0.1, 50.0), (1.0, 3.0), (20.0, 200.0), (3.0, 1e7)])
def test_shot_distribution(factor, value):
    flat = [np.full((300, 300), value, np.float32)]
    o = run_stoker(lambda fn, t, a: fn.noise.shot(a, factor=factor), [flat])[0][0].astype(np.float64)
    counts = o / factor
    lam = value / factor
    # Output values are multiples of factor; the counts are Poisson(lam): mean = variance = lam.
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-3 * max(1.0, lam) ** 0.5 + 1e-3,
                               rtol=1e-6)
    assert abs(counts.mean() - lam) < 5 * (lam / counts.size) ** 0.5 + 1e-6 * lam
    assert abs(counts.var() / lam - 1) < 0.03
    if lam < 10:
        # Small means: P(0) = exp(-lam).
        assert abs(np.mean(np.round(counts) == 0) - np.exp(-lam)) < 0.01


def test_shot_uint8_rounds_and_saturates(photos):
    o = run_stoker(lambda fn, t, a: fn.noise.shot(a, factor=2.5), [photos[:1]])[0][0]
    assert o.dtype == np.uint8
    # 2.5 * k rounded half away from zero: only those values appear.
    allowed = {min(255, int(np.floor(2.5 * k + 0.5))) for k in range(0, 200)}
    assert set(np.unique(o)) <= allowed
    p = photos[0].astype(float)
    mid = (p > 20) & (p < 200)
    # Odd counts land on halves, which round up: +0.25 on average.
    assert abs((o[mid] - p[mid]).mean() - 0.25) < 0.1
    assert abs((o[mid] - p[mid]).var() / (2.5 * p[mid]).mean() - 1) < 0.1


def test_shot_factor_zero_is_identity(photos):
    # As DALI documents it; DALI 2.4 itself returns zeros.
    o = run_stoker(lambda fn, t, a: fn.noise.shot(a, factor=0.0), [photos[:2]])[0]
    for a, b in zip(o, photos):
        np.testing.assert_array_equal(a, b)


def test_shot_negative_input_gives_zero():
    x = [np.array([[-5.0, -0.1, 0.0]], np.float32)]
    o = run_stoker(lambda fn, t, a: fn.noise.shot(a, factor=1.0), [x])[0][0]
    np.testing.assert_array_equal(o, [[0, 0, 0]])


def test_empty_and_odd_shapes():
    for x, layout in (([np.zeros((0, 5, 3), np.uint8)], "HWC"), ([np.zeros((1, 1, 1), np.uint8)], "HWC"),
                      ([np.zeros((7,), np.float32)], None)):
        for op in (lambda a: fn.noise.gaussian(a), lambda a: fn.noise.shot(a), lambda a: fn.noise.salt_and_pepper(a)):
            o = run_stoker(lambda fn, t, a: op(a), [x], [layout])[0][0]
            assert o.shape == x[0].shape and o.dtype == x[0].dtype


# ---- errors

def _raises(build, datas, layouts, exc, msg):
    with pytest.raises(exc, match=msg):
        run_stoker(build, datas, layouts)


X = [np.zeros((4, 5, 3), np.uint8)]
LOC = r" \(test_noise\.py:\d+\)"


@pytest.mark.parametrize("build,datas,layout,exc,msg", [
    (lambda fn, t, a: fn.noise.gaussian(a, stddev=-1.0), X, "HWC", ValueError,
     r"^fn\.noise\.gaussian" + LOC + r": argument 'stddev' must be >= 0, got -1\.$"),
    (lambda fn, t, a: fn.noise.gaussian(a, stddev=fn.random.uniform(range=(-2, -1), seed=3)), X, "HWC", ValueError,
     r"^fn\.noise\.gaussian" + LOC + r" \[sample 0\]: argument 'stddev' must be a finite number >= 0, "
     r"got -1\.\d+ for sample 0\.$"),
    (lambda fn, t, a: fn.noise.gaussian(a), [X[0].astype(np.float16)], "HWC", TypeError,
     r"^fn\.noise\.gaussian" + LOC + r": input 0 has type float16, which noise cannot be added to\. "
     r"Supported types: uint8, int8, uint16, int16, uint32, int32, uint64, int64, float32, float64; "
     r"cast the input first \(fn\.cast\)\.$"),
    (lambda fn, t, a: fn.noise.shot(a), [X[0].astype(bool)], "HWC", TypeError,
     r"^fn\.noise\.shot" + LOC + r": input 0 has type bool, which noise cannot be added to\. "
     r"Supported types: uint8, int8, uint16, int16, uint32, int32, uint64, int64, float32, float64; "
     r"cast the input first \(fn\.cast\)\.$"),
    (lambda fn, t, a: fn.noise.salt_and_pepper(a, prob=1.5), X, "HWC", ValueError,
     r"^fn\.noise\.salt_and_pepper" + LOC + r": argument 'prob' must be in \[0, 1\], got 1\.5\.$"),
    (lambda fn, t, a: fn.noise.salt_and_pepper(a, prob=fn.random.uniform(range=(1.5, 2), seed=3)), X, "HWC",
     ValueError, r"^fn\.noise\.salt_and_pepper" + LOC + r" \[sample 0\]: argument 'prob' must be a "
     r"probability in \[0, 1\], got 1\.\d+ for sample 0\.$"),
    (lambda fn, t, a: fn.noise.salt_and_pepper(a, salt_vs_pepper=fn.random.uniform(range=(-2, -1), seed=3)), X,
     "HWC", ValueError, r"^fn\.noise\.salt_and_pepper" + LOC + r" \[sample 0\]: argument 'salt_vs_pepper' "
     r"must be a probability in \[0, 1\], got -1\.\d+ for sample 0\.$"),
    (lambda fn, t, a: fn.noise.salt_and_pepper(a), X, "HCW", ValueError,
     r"^fn\.noise\.salt_and_pepper" + LOC + r": per_channel=False needs the channels first or last in "
     r"the layout, got layout 'HCW'\. Transpose the input \(fn\.transpose\) or pass per_channel=True\.$"),
    (lambda fn, t, a: fn.noise.shot(a, factor=-1.0), X, "HWC", ValueError,
     r"^fn\.noise\.shot" + LOC + r": argument 'factor' must be >= 0, got -1\.$"),
    (lambda fn, t, a: fn.noise.shot(a, factor=fn.random.uniform(range=(-2, -1), seed=3)), X, "HWC", ValueError,
     r"^fn\.noise\.shot" + LOC + r" \[sample 0\]: argument 'factor' must be a finite number >= 0 \(0 "
     r"leaves the input as it is\), got -1\.\d+ for sample 0\.$"),
])
def test_errors(build, datas, layout, exc, msg):
    _raises(build, [datas], [layout], exc, msg)
