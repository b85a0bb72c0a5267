"""GPU twins of the audio operators (issue 21): preemphasis_filter, spectrogram,
mel_filter_bank, mfcc, to_decibels, nonsilent_region and audio_resample, each on the CPU and on the GPU copy of
the same batch in one pipeline (the decoded LibriSpeech utterances of testdata/audio/wav, random
signals, odd sizes), for every argument and layout the CPU tests use, and the ASR preprocessing
chain of DALI's speech examples on the GPU against the same chain on the CPU.

Tolerances: preemphasis, the mel filter bank, mfcc and nonsilent_region give the CPU's values
exactly (the GPU adds the same terms in the same order without fused multiply-adds); the
spectrogram is within 1e-5 of each sample's largest value (cuFFT against pocketfft: float
rounding, about 1e-6); to_decibels within 2 float ulps of the CPU (CUDA's log2f is within 1 ulp);
the whole ASR chain within 1e-4 of each sample's largest magnitude (the bound the CPU meets
against DALI); audio_resample, whose GPU filter is a windowed sinc built to libsoxr's
specification rather than libsoxr itself, within 5e-4 of full scale (2e-3 for the low quality).

Runs on the GPU machine; skipped where there is no GPU. STOKER_GPU_DRY_RUN=1 runs the same test
logic with the GPU copies replaced by the CPU nodes (no GPU needed): it checks the tests
themselves, not the GPU code."""
import os
import pathlib

import numpy as np
import pytest

import stoker
import test_gpu_graph_ops
from stoker import fn, pipeline_def, types

DRY_RUN = os.environ.get("STOKER_GPU_DRY_RUN") == "1"
HAS_GPU = stoker._C.cuda_device_count() > 0
pytestmark = pytest.mark.skipif(not HAS_GPU and not DRY_RUN, reason="no GPU here")
if DRY_RUN:
    test_gpu_graph_ops.DRY_RUN = True
from test_gpu_graph_ops import assert_same, host  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
TESTDATA = pathlib.Path(os.environ.get("STOKER_TESTDATA", ROOT.parent / "shared" / "testdata"))
WAV = TESTDATA / "audio" / "wav"
f32 = np.float32


def gpu(node):
    return node if DRY_RUN else node.gpu()


def utterances(n=10):
    files = sorted(WAV.glob("*.npy"))
    if len(files) < n:
        pytest.skip(f"the LibriSpeech references of {WAV} are not here")
    return [np.load(f) for f in files[:n]]


def float_utterances(n=10):
    return [(u.astype(f32) / f32(32768)) for u in utterances(n)]


def noise(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape).astype(f32)


def feeder(it):
    return lambda: next(it)


def twins(build, datas, layouts=None, iterations=1, gpu_inputs=None):
    """build(fn, types, *inputs) on CPU nodes and again on their GPU copies, fed `datas` (per
    input, a list of batches: one batch, or one per iteration). Returns per iteration the pairs
    (cpu, gpu) of TensorLists, one per output. `gpu_inputs`: the indices of the inputs the GPU
    twin gets on the GPU (default all; named arguments stay on the CPU, as in DALI)."""
    layouts = layouts or [None] * len(datas)
    batches = [d if isinstance(d[0], list) else [d] for d in datas]
    counters = [iter(b * iterations) for b in batches]

    @pipeline_def(batch_size=max(len(b) for d in batches for b in d), num_threads=2,
                  device_id=None if DRY_RUN else 0, seed=21)
    def pipe():
        xs = [fn.external_source(source=feeder(c), layout=l) for c, l in zip(counters, layouts)]
        cpu = build(fn, types, *xs)
        on = range(len(xs)) if gpu_inputs is None else gpu_inputs
        g = build(fn, types, *[gpu(x) if k in on else x for k, x in enumerate(xs)])
        cpu = cpu if isinstance(cpu, tuple) else (cpu,)
        g = g if isinstance(g, tuple) else (g,)
        return cpu + g

    p = pipe()
    p.build()
    result = []
    for _ in range(iterations):
        outs = p.run()
        k = len(outs) // 2
        result.append(list(zip(outs[:k], outs[k:])))
    return result if iterations > 1 else result[0]


def assert_close_to_max(cpu, g, rtol):
    """Same layout, shapes and dtypes; values within rtol of each CPU sample's largest
    magnitude (spectra span many decades)."""
    assert isinstance(g, stoker.TensorListGPU) or DRY_RUN, type(g)
    assert g.layout() == cpu.layout()
    a, b = host(cpu), host(g)
    assert len(a) == len(b)
    for i, (x, y) in enumerate(zip(a, b)):
        assert x.shape == y.shape and x.dtype == y.dtype, (i, x.shape, y.shape, x.dtype, y.dtype)
        if x.size:
            scale = max(float(np.abs(x.astype(np.float64)).max()), 1e-30)
            err = float(np.abs(y.astype(np.float64) - x.astype(np.float64)).max()) / scale
            assert err <= rtol, f"sample {i}: max difference {err:.3g} of the largest value > {rtol}"


# ---------------------------------------------------------------- preemphasis_filter

def signals():
    return float_utterances(4) + [noise(2, 2), noise(3, 1001), noise(1, 1), noise(4, 70001)]


@pytest.mark.parametrize("border", ["zero", "clamp", "reflect"])
def test_preemphasis_borders(border):
    for c, g in twins(lambda fn, t, x: fn.preemphasis_filter(x, border=border), [signals()]):
        assert_same(c, g)


@pytest.mark.parametrize("border", ["zero", "clamp", "reflect"])
def test_preemphasis_int16_in_and_out_and_per_sample_coefficients(border):
    xs = utterances(3) + [np.array([32767, -32768, 5], np.int16)]
    coeffs = [np.array(c, f32) for c in (0.97, 0.5, 0.0, -1.0)]
    for t_out in ("INT16", "FLOAT", "FLOAT64", "UINT8", "INT64"):
        (c, g), = twins(lambda fn, t, x, k: fn.preemphasis_filter(
            x, preemph_coeff=k, border=border, dtype=getattr(t, t_out)), [xs, coeffs],
            gpu_inputs=[0])
        assert_same(c, g)


@pytest.mark.parametrize("np_type", [np.uint8, np.int8, np.uint16, np.int32, np.uint32,
                                     np.int64, np.uint64, np.float32, np.float64])
def test_preemphasis_input_types_and_shapes(np_type):
    flat = [(np.arange(50) % 7).astype(np_type), (np.arange(9) * 5 % 13).astype(np_type)]
    cubes = [(np.arange(24) * 3 % 11).astype(np_type).reshape(2, 3, 4)]
    for xs in (flat, cubes):
        for dtype in ("FLOAT", "FLOAT64", "INT16"):
            (c, g), = twins(lambda fn, t, x: fn.preemphasis_filter(x, dtype=getattr(t, dtype)),
                            [xs])
            assert_same(c, g)
    x = np.arange(24, dtype=f32).reshape(2, 3, 4)
    (c, g), = twins(lambda fn, t, x: fn.preemphasis_filter(x), [[x]], ["abc"])
    assert_same(c, g)
    assert g.layout() == "abc"


# ---------------------------------------------------------------- spectrogram

SPEC_CASES = [
    dict(),
    dict(nfft=512, window_length=320, window_step=160),
    dict(nfft=400, window_length=301, window_step=100, reflect_padding=False),
    dict(nfft=512, window_length=320, window_step=160, center_windows=False, layout="tf"),
    dict(nfft=256, window_length=256, window_step=64, power=1),
    dict(nfft=511, window_length=400, window_step=200, layout="tf"),
    dict(nfft=1, window_length=1, window_step=7),
    dict(nfft=2, window_length=2, window_step=1, layout="tf", power=1),
]


@pytest.mark.parametrize("kw", SPEC_CASES)
def test_spectrogram(kw):
    xs = float_utterances(3) + [noise(4, 1000), noise(5, 1), noise(6, 3)]
    if not kw.get("center_windows", True):
        xs = [x for x in xs if x.size >= kw["window_length"]]
    (c, g), = twins(lambda fn, t, x: fn.spectrogram(x, **kw), [xs])
    assert_close_to_max(c, g, 1e-5)
    assert g.layout() == kw.get("layout", "ft")
    # (1, n) and (n, 1): one channel too
    flat = [noise(6, 700), noise(7, 600)]
    for shaped in ([v[None] for v in flat], [v[:, None] for v in flat]):
        (c, g), = twins(lambda fn, t, x: fn.spectrogram(x, **kw), [shaped])
        assert_close_to_max(c, g, 1e-5)


def test_spectrogram_custom_window_and_default_nfft():
    w = np.random.default_rng(3).random(300).astype(f32) - f32(0.2)
    (c, g), = twins(lambda fn, t, x: fn.spectrogram(x, window_length=300, window_step=100,
                                                     window_fn=w.tolist()),
                    [[noise(9, 4000), noise(10, 299), noise(11, 12345)]])
    assert_close_to_max(c, g, 1e-5)
    assert host(g)[0].shape == (151, 41)


def test_spectrogram_many_frames_and_changing_batches():
    """More frames than one transform takes (several cuFFT executions over zero-padded frames),
    then batches of other sizes and lengths through the same operator (its cached plans)."""
    big = [noise(12, 100000), noise(13, 99999), noise(14, 60000)]
    small = [noise(15, 5000)]
    odd = [noise(16, 777), noise(17, 31), noise(18, 20000), noise(19, 4096)]
    kw = dict(nfft=2048, window_length=2000, window_step=64)
    runs = twins(lambda fn, t, x: fn.spectrogram(x, **kw), [[big, small, odd]], iterations=3)
    for (c, g), in runs:
        assert_close_to_max(c, g, 1e-5)
    kw = dict(nfft=512, window_length=320, window_step=160, layout="tf")
    runs = twins(lambda fn, t, x: fn.spectrogram(x, **kw), [[odd, big, small]], iterations=3)
    for (c, g), in runs:
        assert_close_to_max(c, g, 1e-5)


# ---------------------------------------------------------------- mel_filter_bank

MEL_CASES = [dict(), dict(sample_rate=16000, nfilter=64),
             dict(sample_rate=16000, nfilter=64, mel_formula="htk"),
             dict(sample_rate=16000, nfilter=40, normalize=False, freq_low=100, freq_high=7000),
             dict(sample_rate=16000, nfilter=40, mel_formula="htk", normalize=False, freq_low=300),
             dict(sample_rate=8000, nfilter=128)]


@pytest.mark.parametrize("kw", MEL_CASES)
def test_mel_filter_bank(kw):
    specs = [np.random.default_rng(13).random((257, 30)).astype(f32) ** 4,
             np.random.default_rng(14).random((257, 1)).astype(f32),
             np.random.default_rng(15).random((257, 0)).astype(f32)]
    (c, g), = twins(lambda fn, t, x: fn.mel_filter_bank(x, **kw), [specs], ["ft"])
    assert_same(c, g)


@pytest.mark.parametrize("layout,shapes", [("tf", [(30, 257), (7, 257)]),
                                           ("ft", [(129, 7), (129, 40)]),
                                           (None, [(2, 129, 7), (3, 129, 1)]),
                                           ("f", [(129,), (129,)]),
                                           ("cft", [(2, 129, 5), (1, 129, 9)]),
                                           ("ftc", [(129, 5, 2), (129, 3, 2)]),
                                           ("tfc", [(9, 65, 2), (4, 65, 3)])])
def test_mel_filter_bank_layouts(layout, shapes):
    rng = np.random.default_rng(15)
    xs = [rng.random(s).astype(f32) for s in shapes]
    (c, g), = twins(lambda fn, t, x: fn.mel_filter_bank(x, sample_rate=16000, nfilter=20),
                    [xs], [layout])
    assert_same(c, g)


def test_mel_filter_bank_spectra_of_several_sizes():
    rng = np.random.default_rng(16)
    batches = [[rng.random((257, 20)).astype(f32), rng.random((129, 3)).astype(f32),
                rng.random((513, 11)).astype(f32), rng.random((257, 2)).astype(f32)],
               [rng.random((65, 4)).astype(f32)]]
    for (c, g), in twins(lambda fn, t, x: fn.mel_filter_bank(x, sample_rate=16000, nfilter=32),
                         [batches], ["ft"], iterations=4):
        assert_same(c, g)


# ---------------------------------------------------------------- mfcc

@pytest.mark.parametrize("dct_type", [1, 2, 3, 4])
@pytest.mark.parametrize("normalize", [False, True])
def test_mfcc_dct_types(dct_type, normalize):
    if dct_type == 1 and normalize:
        return
    xs = [noise(17, 64, 30), noise(18, 40, 1), noise(19, 13, 5), noise(20, 2, 3)]
    (c, g), = twins(lambda fn, t, x: fn.mfcc(x, dct_type=dct_type, normalize=normalize), [xs])
    assert_same(c, g)


def test_mfcc_lifter_axes_and_layouts():
    xs = [noise(20, 30, 64), noise(21, 5, 64)]
    for kw in (dict(axis=1, n_mfcc=10), dict(n_mfcc=100), dict(lifter=22.0, n_mfcc=13),
               dict(axis=-1, lifter=-3.5, normalize=True, n_mfcc=7)):
        (c, g), = twins(lambda fn, t, x: fn.mfcc(x, **kw), [xs])
        assert_same(c, g)
    (c, g), = twins(lambda fn, t, x: fn.mfcc(x, axis=1), [[noise(21, 2, 40, 7)]], ["cft"])
    assert_same(c, g)
    assert g.layout() == "cft"


# ---------------------------------------------------------------- to_decibels

@pytest.mark.parametrize("kw", [dict(), dict(multiplier=20.0, reference=0.5, cutoff_db=-80.0),
                                dict(cutoff_db=-60.0), dict(reference=1.0),
                                dict(multiplier=float(np.log(10)), reference=1.0,
                                     cutoff_db=float(np.log(1e-20)))])
def test_to_decibels(kw):
    spectra = [np.random.default_rng(22).random((257, 30)).astype(f32) ** 6,
               np.zeros((3, 4), f32), np.array([[-1.0, 0.0, 2.0, np.nan]], f32)]
    flat = [np.random.default_rng(23).random(100001).astype(f32), np.zeros(0, f32),
            np.array([np.inf, 1.0], f32)]
    for xs in (spectra, flat):
        (c, g), = twins(lambda fn, t, x: fn.to_decibels(x, **kw), [xs])
        assert isinstance(g, stoker.TensorListGPU) or DRY_RUN
        assert g.layout() == c.layout()
        for i, (a, b) in enumerate(zip(host(c), host(g))):
            assert a.shape == b.shape and a.dtype == b.dtype == np.float32
            np.testing.assert_allclose(b, a, rtol=2.5e-7, atol=1e-6, equal_nan=True,
                                       err_msg=f"sample {i}")


# ---------------------------------------------------------------- nonsilent_region

@pytest.mark.parametrize("kw", [dict(), dict(cutoff_db=-40.0),
                                dict(window_length=256, cutoff_db=-30.0),
                                dict(window_length=512, reference_power=1e-3, cutoff_db=-20.0),
                                dict(window_length=1024, reset_interval=-1),
                                dict(window_length=1, cutoff_db=-3.0),
                                dict(window_length=100000, cutoff_db=-10.0)])
def test_nonsilent_region(kw):
    xs = float_utterances(10)
    quiet = np.zeros(6000, f32)
    quiet[2500:3000] = noise(23, 500) * 0.01
    xs += [quiet, np.zeros(100, f32), noise(24, 10), np.zeros(0, f32), noise(25, 1)]
    (cb, gb), (cl, gl) = twins(lambda fn, t, x: fn.nonsilent_region(x, **kw), [xs])
    assert_same(cb, gb)
    assert_same(cl, gl)


@pytest.mark.parametrize("np_type", [np.int16, np.int32, np.uint8, np.float64])
def test_nonsilent_region_types(np_type):
    xs = [u.astype(np_type) if np_type != np.uint8 else (u // 256 + 128).astype(np.uint8)
          for u in utterances(4)]
    x = np.zeros(10, np_type)
    x[3] = 1
    xs.append(x)
    for kw in (dict(cutoff_db=-35.0), dict(window_length=4, reference_power=100.0, cutoff_db=-10.0)):
        (cb, gb), (cl, gl) = twins(lambda fn, t, x: fn.nonsilent_region(x, **kw), [xs])
        assert_same(cb, gb)
        assert_same(cl, gl)


# ---------------------------------------------------------------- the ASR chain

def asr_chain(fn, t, audio):
    audio = fn.preemphasis_filter(audio, preemph_coeff=0.97)
    spec = fn.spectrogram(audio, nfft=512, window_length=320, window_step=160)
    mel = fn.mel_filter_bank(spec, sample_rate=16000, nfilter=64)
    log = fn.to_decibels(mel, multiplier=float(np.log(10)), reference=1.0,
                         cutoff_db=float(np.log(1e-20)))
    norm = fn.normalize(log, axes=[1])
    return fn.pad(norm, fill_value=0)


@pytest.mark.parametrize("batch", [1, 4, 10])
def test_asr_preprocessing_chain(batch):
    xs = float_utterances(10)[:batch]
    (c, g), = twins(asr_chain, [xs])
    assert_close_to_max(c, g, 1e-4)
    longest = max(x.size // 160 + 1 for x in xs)
    assert g.layout() == "ft" and all(y.shape == (64, longest) for y in host(g))


def test_mfcc_chain():
    xs = float_utterances(3)
    build = lambda fn, t, x: fn.mfcc(fn.to_decibels(fn.mel_filter_bank(
        fn.spectrogram(x, nfft=512, window_length=400, window_step=160), sample_rate=16000,
        nfilter=40), reference=1.0, cutoff_db=-100.0), n_mfcc=13, normalize=True, lifter=22.0)
    (c, g), = twins(build, [xs])
    assert_close_to_max(c, g, 1e-4)


# ---------------------------------------------------------------- errors

def error_pair(build, datas, layouts=None, exc=ValueError):
    """The error of the graph on the CPU and on the GPU: the same text (the same build line)."""
    msgs = []
    for on_gpu in (False, True):
        @pipeline_def(batch_size=len(datas[0]), num_threads=2,
                      device_id=None if DRY_RUN else 0, seed=21)
        def pipe():
            xs = [fn.external_source(source=feeder(iter([d])), layout=l)
                  for d, l in zip(datas, layouts or [None] * len(datas))]
            if on_gpu:
                xs[0] = gpu(xs[0])
            return build(fn, types, *xs)

        with pytest.raises(exc) as e:
            p = pipe()
            p.build()
            p.run()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    return msgs[1]


def test_errors_match_the_cpu():
    X = [np.zeros(1000, f32)]
    S = [np.zeros((257, 4), f32)]
    m = error_pair(lambda fn, t, x: fn.spectrogram(x), [[np.zeros(10, np.int16)]], exc=TypeError)
    assert m.endswith("the input must be float32 audio, got int16; convert it with "
                      "fn.cast(x, dtype=types.FLOAT).")
    m = error_pair(lambda fn, t, x: fn.spectrogram(x), [[X[0], np.zeros(0, f32)]])
    assert m.endswith("sample 1 (shape (0,)) is empty; a spectrogram needs at least one sample "
                      "of audio.")
    m = error_pair(lambda fn, t, x: fn.spectrogram(x, center_windows=False),
                   [[np.zeros(100, f32)]])
    assert "is shorter than one window (512 samples)" in m
    m = error_pair(lambda fn, t, x: fn.spectrogram(x), [[np.zeros((2, 100), f32)]])
    assert "is not one channel of audio" in m
    m = error_pair(lambda fn, t, x: fn.mel_filter_bank(x), [S], ["xy"])
    assert "has no frequency axis 'f'" in m
    m = error_pair(lambda fn, t, x: fn.mel_filter_bank(x), [[np.zeros((1, 5), f32)]], ["ft"])
    assert "has 1 frequency bin (axis 0)" in m
    m = error_pair(lambda fn, t, x: fn.mfcc(x, axis=2), [S])
    assert "argument 'axis' is 2, out of range" in m
    m = error_pair(lambda fn, t, x: fn.mfcc(x, dct_type=1), [[np.zeros((1, 4), f32)]])
    assert m.endswith("DCT type I needs at least 2.")
    m = error_pair(lambda fn, t, x: fn.to_decibels(x), [[np.zeros(4, np.int16)]], exc=TypeError)
    assert m.endswith("the input must be float32 magnitudes, got int16; convert it with "
                      "fn.cast(x, dtype=types.FLOAT).")
    m = error_pair(lambda fn, t, x: fn.preemphasis_filter(x), [[np.zeros(3, np.bool_)]],
                   exc=TypeError)
    assert "the input must be a numeric signal other than float16 and bool, got bool" in m
    m = error_pair(lambda fn, t, x, c: fn.preemphasis_filter(x, preemph_coeff=c),
                   [X * 2, [np.array(0.5, f32), np.array(np.nan, f32)]])
    assert m.endswith("argument 'preemph_coeff' must be a finite number, got nan for sample 1.")
    m = error_pair(lambda fn, t, x: fn.nonsilent_region(x), [[np.zeros((2, 3), f32)]])
    assert m.endswith("sample 0 has shape (2, 3); give a 1-D signal (mix channels down first, "
                      "e.g. decoders.audio(downmix=True)).")


def test_power_spectrum_stays_on_the_cpu():
    """DALI 2.4 has no GPU power_spectrum, and neither has stoker."""
    if DRY_RUN:
        pytest.skip("needs a GPU node")
    with pytest.raises(Exception) as e:
        twins(lambda fn, t, x: fn.power_spectrum(x), [[np.zeros(8, f32)]])
    assert "power_spectrum" in str(e.value)


# ---------------------------------------------------------------- audio_resample

def tones(seed, n, top, channels=None):
    """A sum of five sines below `top` (a fraction of the sampling rate), peak under 0.8, faded
    in and out over 200 frames as recorded audio is (the two resamplers' filters answer a jump
    at the ends differently, by up to 2% of it)."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    f = rng.uniform(0.002, top, 5)
    x = sum(0.15 * np.sin(2 * np.pi * fi * t + rng.uniform(0, 6)) for fi in f)
    fade = min(200, n // 4)
    if fade:
        ramp = np.sin(np.linspace(0, np.pi / 2, fade)) ** 2
        x = x * np.concatenate([ramp, np.ones(n - 2 * fade), ramp[::-1]])
    if channels:
        x = np.stack([x, np.roll(x, 7)][:channels], axis=1)
    return x.astype(f32)


def resample_inputs(top):
    xs = [tones(1, 16000, top), tones(2, 999, top), tones(3, 1, top), tones(4, 0, top)]
    try:
        xs += [u[:48000] for u in float_utterances(3)]
    except pytest.skip.Exception:
        pass
    return xs


@pytest.mark.parametrize("kw,quality", [
    (dict(in_rate=16000.0, out_rate=8000.0), 50), (dict(in_rate=16000.0, out_rate=22050.0), 50),
    (dict(in_rate=44100.0, out_rate=16000.0), 90), (dict(scale=3.0), 35),
    (dict(scale=0.5), 10), (dict(in_rate=8000.0, out_rate=8000.0), 50)])
def test_audio_resample(kw, quality):
    ratio = kw.get("scale", kw.get("out_rate", 1.0) / kw.get("in_rate", 1.0))
    xs = resample_inputs(0.4 * min(1.0, ratio))
    tol = 2e-3 if quality < 25 else 5e-4
    (c, g), = twins(lambda fn, t, x: fn.audio_resample(x, quality=quality, **kw), [xs], ["t"])
    assert isinstance(g, stoker.TensorListGPU) or DRY_RUN
    assert g.layout() == c.layout() == "t"
    for i, (x, a, b) in enumerate(zip(xs, host(c), host(g))):
        assert a.shape == b.shape and a.dtype == b.dtype == np.float32, (i, a.shape, b.shape)
        # A signal shorter than the filter has no steady part to compare: libsoxr gives zeros
        # for a single frame, the windowed sinc the frame times its gain.
        if len(x) >= 999:
            err = float(np.abs(a - b).max())
            assert err <= (0 if ratio == 1 else tol), (i, err)


def test_audio_resample_channels_lengths_and_integer_types():
    x2 = [tones(5, 4000, 0.2, channels=2), tones(6, 333, 0.2, channels=2)]
    (c, g), = twins(lambda fn, t, x: fn.audio_resample(x, scale=1.5), [x2], ["tc"])
    assert [a.shape for a in host(g)] == [(6000, 2), (500, 2)] and g.layout() == "tc"
    assert max(float(np.abs(a - b).max()) for a, b in zip(host(c), host(g))) <= 5e-4
    xi = [(tones(7, 3000, 0.3) * 32767).astype(np.int16), (tones(8, 50, 0.3) * 32767).astype(np.int16)]
    outs = twins(lambda fn, t, x: (fn.audio_resample(x, in_rate=16000.0, out_rate=12000.0),
                                   fn.audio_resample(x, out_length=4321, dtype=t.FLOAT),
                                   fn.audio_resample(x, scale=2.0, dtype=t.UINT8)), [xi])
    (c16, g16), (cf, gf), (cu, gu) = outs
    assert all(a.dtype == np.int16 for a in host(g16)) and [a.shape for a in host(gf)] == [(4321,)] * 2
    assert max(int(np.abs(a.astype(int) - b.astype(int)).max()) for a, b in zip(host(c16), host(g16))) <= 17
    assert float(np.abs(host(cf)[0] - host(gf)[0]).max()) <= 5e-4
    assert all(a.dtype == np.uint8 for a in host(gu))
    assert int(np.abs(host(cu)[0].astype(int) - host(gu)[0].astype(int)).max()) <= 1


def test_audio_resample_against_scipy():
    """An independent reference: SciPy's polyphase resampler on tones well inside the passband
    (the filters differ only near the Nyquist frequency)."""
    from scipy import signal
    x = tones(9, 32000, 0.15)
    (c, g), = twins(lambda fn, t, x: fn.audio_resample(x, in_rate=16000.0, out_rate=24000.0), [[x]])
    ref = signal.resample_poly(x.astype(np.float64), 3, 2, window=("kaiser", 12.0))
    y = host(g)[0]
    assert y.shape == ref.shape
    assert float(np.abs(y[200:-200] - ref[200:-200]).max()) <= 1e-3
