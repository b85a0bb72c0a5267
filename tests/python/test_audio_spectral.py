"""The spectral audio operators (preemphasis_filter, spectrogram, mel_filter_bank, mfcc,
to_decibels, power_spectrum, nonsilent_region) on the decoded LibriSpeech utterances of
../shared/testdata/audio/wav (16 kHz mono, their .npy references fed through external_source)
and on random signals: against DALI 2.4 on the CPU (within 1e-4 of each sample's largest
magnitude; measured: 7e-6 at most for one operator, 3e-5 for the whole ASR chain), against librosa 0.11 / SciPy / NumPy where the definitions coincide, the ASR
preprocessing chain of DALI's speech examples against the same chain in DALI, and every error
message in full."""
import pathlib

import numpy as np
import pytest

from _dali_ref import error_checker, real_dali, run, stoker_error, stoker_lib

check_error = error_checker(__file__)
WAV = pathlib.Path(__file__).resolve().parents[3] / "shared" / "testdata" / "audio" / "wav"
f32 = np.float32


def utterances(n=10):
    files = sorted(WAV.glob("*.npy"))
    if len(files) < n:
        pytest.skip("the LibriSpeech references of shared/testdata/audio/wav are not here")
    return [np.load(f) for f in files[:n]]


def float_utterances(n=10):
    return [(u.astype(f32) / f32(32768)) for u in utterances(n)]


def noise(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape).astype(f32)


def hann(n):
    t = np.arange(n)
    return 0.5 * (1 - np.cos(2 * np.pi * (t + 0.5) / n))


def assert_close(got, want, rtol=1e-4, what=""):
    """Relative to the largest magnitude of the reference sample (spectra span many decades)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if want.size:
        scale = max(np.abs(want).max(), 1e-30)
        err = np.abs(got - want).max() / scale
        assert err <= rtol, f"{what}: max relative difference {err:.3g} > {rtol}"


def vs_dali(build, datas, layouts=None, rtol=1e-4, **kw):
    """stoker's outputs and, where DALI is installed, DALI's: same layouts, dtypes and shapes,
    values within rtol of each sample's largest magnitude."""
    mine = run(stoker_lib(), build, datas, layouts, **kw)
    try:
        lib = real_dali()
    except pytest.skip.Exception:
        return mine
    ref = run(lib, build, datas, layouts, **kw)
    assert len(mine) == len(ref)
    for (ms, ml, mt), (rs, rl, rt) in zip(mine, ref):
        assert (ml, mt) == (rl, rt)
        assert [a.shape for a in ms] == [b.shape for b in rs]
        for a, b in zip(ms, rs):
            if np.issubdtype(b.dtype, np.integer):
                np.testing.assert_array_equal(a, b)
            else:
                assert_close(a, b, rtol)
    return mine


# ---------------------------------------------------------------- preemphasis_filter

@pytest.mark.parametrize("border", ["zero", "clamp", "reflect"])
def test_preemphasis_against_scipy_and_dali(border):
    from scipy.signal import lfilter
    xs = float_utterances(4) + [noise(2, 2), noise(3, 1001)]
    if border != "reflect":  # DALI 2.4 reads x[1] past the end of a 1-sample signal
        xs.append(noise(1, 1))
    (out, layout, dtype), = vs_dali(lambda fn, t, x: fn.preemphasis_filter(x, border=border), [xs],
                                    rtol=0)
    assert dtype == "float32" and layout == ""
    for x, y in zip(xs, out):
        first = {"zero": 0.0, "clamp": x[0], "reflect": x[1] if len(x) > 1 else 0.0}[border]
        ref = lfilter([1, -0.97], [1], x.astype(np.float64))
        ref[0] = x[0] - 0.97 * first
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)
    x = noise(1, 1)
    (out, _, _), = run(stoker_lib(), lambda fn, t, x: fn.preemphasis_filter(x, border=border),
                       [[x]])
    np.testing.assert_allclose(out[0], x - f32(0.97) * (x if border == "clamp" else 0), rtol=1e-6)


def test_preemphasis_int16_in_and_out_and_per_sample_coefficients():
    xs = utterances(3)
    coeffs = [np.array(c, f32) for c in (0.97, 0.5, 0.0)]
    (out,) = vs_dali(lambda fn, t, x, c: fn.preemphasis_filter(x, preemph_coeff=c, dtype=t.INT16),
                     [xs, coeffs], rtol=0)
    samples, _, dtype = out
    assert dtype == "int16"
    for x, c, y in zip(xs, coeffs, samples):
        xf = x.astype(f32)
        ref = xf - f32(c) * np.concatenate([xf[:1], xf[:-1]])
        np.testing.assert_array_equal(y, np.clip(np.sign(ref) * np.floor(np.abs(ref) + 0.5),
                                                 -32768, 32767).astype(np.int16))
    np.testing.assert_array_equal(samples[2], xs[2])  # coefficient 0: unchanged


def test_preemphasis_shapes_layouts_and_types():
    x = np.arange(24, dtype=f32).reshape(2, 3, 4)
    (out, layout, dtype), = vs_dali(lambda fn, t, x: fn.preemphasis_filter(x, dtype=t.FLOAT64),
                                    [[x]], layouts=["abc"], rtol=0)
    assert layout == "abc" and dtype == "float64" and out[0].shape == (2, 3, 4)
    flat = x.ravel().astype(np.float64)
    np.testing.assert_allclose(out[0].ravel()[1:], flat[1:] - np.float32(0.97) * flat[:-1], rtol=1e-6)
    for np_type in (np.uint8, np.int32, np.uint16, np.float64):
        vs_dali(lambda fn, t, x: fn.preemphasis_filter(x), [[(np.arange(50) % 7).astype(np_type)]])


# ---------------------------------------------------------------- spectrogram

SPEC_CASES = [
    dict(),
    dict(nfft=512, window_length=320, window_step=160),
    dict(nfft=400, window_length=301, window_step=100, reflect_padding=False),
    dict(nfft=512, window_length=320, window_step=160, center_windows=False, layout="tf"),
    dict(nfft=256, window_length=256, window_step=64, power=1),
    dict(nfft=511, window_length=400, window_step=200, layout="tf"),
]


@pytest.mark.parametrize("kw", SPEC_CASES)
def test_spectrogram_against_dali(kw):
    xs = float_utterances(3) + [noise(4, 1000), noise(5, 1)]
    if not kw.get("center_windows", True):
        xs = [x for x in xs if x.size >= kw["window_length"]]
    (out, layout, dtype), = vs_dali(lambda fn, t, x: fn.spectrogram(x, **kw), [xs])
    assert layout == kw.get("layout", "ft") and dtype == "float32"
    # (1, n) and (n, 1): one channel too
    flat = [noise(6, 700), noise(7, 600)]
    (row, _, _), = vs_dali(lambda fn, t, x: fn.spectrogram(x, **kw), [[v[None] for v in flat]])
    (col, _, _), = vs_dali(lambda fn, t, x: fn.spectrogram(x, **kw), [[v[:, None] for v in flat]])
    (ref, _, _), = run(stoker_lib(), lambda fn, t, x: fn.spectrogram(x, **kw), [flat])
    for a, b, c in zip(row, col, ref):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, c)
    nfft = kw.get("nfft", 512)
    for x, y in zip(xs, out):
        n, step = x.size, kw.get("window_step", 256)
        frames = n // step + 1 if kw.get("center_windows", True) else \
            (n - kw["window_length"]) // step + 1
        assert y.shape == ((frames, nfft // 2 + 1) if layout == "tf" else (nfft // 2 + 1, frames))


@pytest.mark.parametrize("kw", [dict(nfft=512, window_length=512, window_step=256),
                                dict(nfft=512, window_length=320, window_step=160),
                                dict(nfft=400, window_length=256, window_step=77, power=1)])
def test_spectrogram_against_librosa(kw):
    # librosa pads the signal by nfft // 2 and centres the window in the frame: the same frames
    # as DALI's (padding window_length // 2) where nfft - window_length is even.
    librosa = pytest.importorskip("librosa")
    xs = float_utterances(2) + [noise(8, 5000)]
    (out, _, _), = run(stoker_lib(), lambda fn, t, x: fn.spectrogram(x, **kw), [xs])
    for x, y in zip(xs, out):
        ref = np.abs(librosa.stft(x.astype(np.float64), n_fft=kw["nfft"],
                                  hop_length=kw["window_step"], win_length=kw["window_length"],
                                  window=hann(kw["window_length"]), center=True,
                                  pad_mode="reflect")) ** kw.get("power", 2)
        assert_close(y, ref, 1e-5, "librosa.stft")


def test_spectrogram_custom_window_and_default_nfft():
    w = np.random.default_rng(3).random(300).astype(f32)
    x = noise(9, 4000)
    (out, _, _), = vs_dali(lambda fn, t, x: fn.spectrogram(x, window_length=300, window_step=100,
                                                            window_fn=w.tolist()), [[x]])
    assert out[0].shape == (151, 41)  # nfft defaults to window_length
    pad = np.pad(x.astype(np.float64), 150, mode="reflect")
    frames = np.stack([pad[i * 100:i * 100 + 300] * w for i in range(41)], 1)
    assert_close(out[0], np.abs(np.fft.rfft(frames, axis=0)) ** 2, 1e-5, "numpy")


# ---------------------------------------------------------------- power_spectrum

@pytest.mark.parametrize("kw,shape", [(dict(), (1000,)), (dict(nfft=64), (100,)),
                                      (dict(nfft=300, power=1), (257,)),
                                      (dict(axis=0), (6, 50)), (dict(axis=1), (3, 40, 5)),
                                      (dict(axis=-1, nfft=33), (4, 30))])
def test_power_spectrum_against_numpy_and_dali(kw, shape):
    xs = [noise(10, *shape), noise(11, *shape)]
    (out, _, dtype), = vs_dali(lambda fn, t, x: fn.power_spectrum(x, **kw), [xs])
    axis = kw.get("axis", -1)
    for x, y in zip(xs, out):
        ref = np.abs(np.fft.rfft(x.astype(np.float64), n=kw.get("nfft"), axis=axis)) ** kw.get("power", 2)
        assert_close(y, ref, 1e-5, "numpy.fft.rfft")


def test_power_spectrum_long_signal_short_fft_and_negative_axis():
    # DALI 2.4 corrupts its heap on these (nfft 1024 over a whole utterance); NumPy only.
    xs = float_utterances(2)
    (out, _, _), = run(stoker_lib(), lambda fn, t, x: fn.power_spectrum(x, nfft=1024), [xs])
    for x, y in zip(xs, out):
        assert_close(y, np.abs(np.fft.rfft(x.astype(np.float64)[:1024])) ** 2, 1e-5)
    x = noise(12, 6, 50)
    (out, _, _), = run(stoker_lib(), lambda fn, t, x: fn.power_spectrum(x, axis=-2), [[x]])
    assert_close(out[0], np.abs(np.fft.rfft(x.astype(np.float64), axis=0)) ** 2, 1e-5)


# ---------------------------------------------------------------- mel_filter_bank

MEL_CASES = [dict(), dict(sample_rate=16000, nfilter=64),
             dict(sample_rate=16000, nfilter=64, mel_formula="htk"),
             dict(sample_rate=16000, nfilter=40, normalize=False, freq_low=100, freq_high=7000),
             dict(sample_rate=16000, nfilter=40, mel_formula="htk", normalize=False, freq_low=300),
             dict(sample_rate=8000, nfilter=128)]


@pytest.mark.filterwarnings("ignore:Empty filters detected")  # 128 bands of a 512-point FFT
@pytest.mark.parametrize("kw", MEL_CASES)
def test_mel_filter_bank_against_librosa_and_dali(kw):
    librosa = pytest.importorskip("librosa")
    specs = [np.random.default_rng(13).random((257, 30)).astype(f32) ** 4,
             np.random.default_rng(14).random((257, 1)).astype(f32)]
    (out, layout, _), = vs_dali(lambda fn, t, x: fn.mel_filter_bank(x, **kw), [specs], ["ft"])
    assert layout == "ft"
    sr = kw.get("sample_rate", 44100.0)
    m = librosa.filters.mel(sr=sr, n_fft=512, n_mels=kw.get("nfilter", 128),
                            fmin=kw.get("freq_low", 0.0), fmax=kw.get("freq_high", None),
                            htk=kw.get("mel_formula") == "htk",
                            norm="slaney" if kw.get("normalize", True) else None, dtype=np.float64)
    for s, y in zip(specs, out):
        assert_close(y, m @ s.astype(np.float64), 1e-5, "librosa.filters.mel")


@pytest.mark.parametrize("layout,shape,fax", [("tf", (30, 257), 1), ("ft", (129, 7), 0),
                                              (None, (2, 129, 7), 1), ("f", (129,), 0),
                                              ("cft", (2, 129, 5), 1), ("ftc", (129, 5, 2), 0)])
def test_mel_filter_bank_frequency_axis_from_layout(layout, shape, fax):
    librosa = pytest.importorskip("librosa")
    x = np.random.default_rng(15).random(shape).astype(f32)
    (out, got_layout, _), = vs_dali(lambda fn, t, x: fn.mel_filter_bank(x, sample_rate=16000,
                                                                        nfilter=20),
                                    [[x]], [layout])
    assert got_layout == (layout or "")
    m = librosa.filters.mel(sr=16000, n_fft=2 * (shape[fax] - 1), n_mels=20, dtype=np.float64)
    ref = np.moveaxis(np.tensordot(m, np.moveaxis(x.astype(np.float64), fax, 0), 1), 0, fax)
    assert_close(out[0], ref, 1e-5)


def test_mel_filter_bank_frequency_in_the_middle():
    # "tfc": DALI 2.4 fails on this layout ("Strided data not supported"); stoker takes it.
    x = np.random.default_rng(16).random((9, 65, 2)).astype(f32)
    (a, _, _), = run(stoker_lib(), lambda fn, t, x: fn.mel_filter_bank(x, sample_rate=8000,
                                                                       nfilter=10), [[x]], ["tfc"])
    (b, _, _), = run(stoker_lib(), lambda fn, t, x: fn.mel_filter_bank(x, sample_rate=8000,
                                                                       nfilter=10),
                     [[np.ascontiguousarray(x.transpose(1, 0, 2))]], ["ftc"])
    np.testing.assert_allclose(a[0], b[0].transpose(1, 0, 2), rtol=1e-6)


# ---------------------------------------------------------------- mfcc

@pytest.mark.parametrize("dct_type", [1, 2, 3, 4])
@pytest.mark.parametrize("normalize", [False, True])
def test_mfcc_against_scipy_and_dali(dct_type, normalize):
    from scipy.fft import dct
    if dct_type == 1 and normalize:
        return
    xs = [noise(17, 64, 30), noise(18, 40, 1), noise(19, 13, 5)]
    (out, _, _), = vs_dali(lambda fn, t, x: fn.mfcc(x, dct_type=dct_type, normalize=normalize),
                           [xs])
    for x, y in zip(xs, out):
        ref = dct(x.astype(np.float64), type=dct_type, axis=0, norm="ortho" if normalize else None)
        assert_close(y, ref[:20] * (1 if normalize else 0.5), 1e-5, "scipy.fft.dct")


def test_mfcc_against_librosa_with_lifter_and_axes():
    librosa = pytest.importorskip("librosa")
    xs = float_utterances(2)
    build = lambda fn, t, x: fn.mfcc(fn.to_decibels(fn.mel_filter_bank(
        fn.spectrogram(x, nfft=512, window_length=400, window_step=160), sample_rate=16000,
        nfilter=40), reference=1.0, cutoff_db=-100.0), n_mfcc=13, normalize=True, lifter=22.0)
    (out, _, _), = vs_dali(build, [xs])
    for x, y in zip(xs, out):
        s = np.abs(librosa.stft(x.astype(np.float64), n_fft=512, hop_length=160, win_length=400,
                                window=hann(400), pad_mode="reflect")) ** 2
        mel = librosa.filters.mel(sr=16000, n_fft=512, n_mels=40, dtype=np.float64) @ s
        ref = librosa.feature.mfcc(S=librosa.power_to_db(mel, ref=1.0, amin=1e-10, top_db=None),
                                   n_mfcc=13, dct_type=2, norm="ortho", lifter=22)
        assert_close(y, ref, 1e-4, "librosa.feature.mfcc")
    x = noise(20, 30, 64)
    (out, _, _), = vs_dali(lambda fn, t, x: fn.mfcc(x, axis=1, n_mfcc=10), [[x]])
    assert out[0].shape == (30, 10)
    (out, _, _), = vs_dali(lambda fn, t, x: fn.mfcc(x, n_mfcc=100), [[x]])
    assert out[0].shape == (30, 64)  # never more coefficients than values, as DALI
    (out, layout, _), = vs_dali(lambda fn, t, x: fn.mfcc(x), [[noise(21, 2, 40, 7)]], ["cft"])
    assert out[0].shape == (2, 40, 7) and layout == "cft"


# ---------------------------------------------------------------- to_decibels

@pytest.mark.parametrize("kw", [dict(), dict(multiplier=20.0, reference=0.5, cutoff_db=-80.0),
                                dict(cutoff_db=-60.0), dict(multiplier=float(np.log(10)),
                                                            reference=1.0,
                                                            cutoff_db=float(np.log(1e-20)))])
def test_to_decibels_against_librosa_and_dali(kw):
    librosa = pytest.importorskip("librosa")
    xs = [np.random.default_rng(22).random((257, 30)).astype(f32) ** 6,
          np.zeros((3, 4), f32), np.array([[-1.0, 0.0, 2.0, np.nan]], f32)]
    (out, _, _), = vs_dali(lambda fn, t, x: fn.to_decibels(x, **kw), [xs])
    mult = kw.get("multiplier", 10.0)
    cutoff = kw.get("cutoff_db", -200.0)
    x = xs[0].astype(np.float64)
    ref = kw.get("reference", x.max())
    want = mult / 10 * librosa.power_to_db(np.maximum(x / ref, 10 ** (cutoff / mult)), ref=1.0,
                                           amin=1e-300, top_db=None)
    np.testing.assert_allclose(out[0], want, rtol=1e-5, atol=1e-4 * max(1, abs(cutoff)))
    assert np.all(out[1] == out[1].flat[0])  # all zeros: every value saturates


# ---------------------------------------------------------------- nonsilent_region

def nonsilent_ref(x, cutoff_db=-60.0, window_length=2048, reference_power=0.0):
    sq = x.astype(np.float64) ** 2
    c = np.concatenate([[0.0], np.cumsum(sq)])
    i = np.arange(len(x))
    mms = (c[i + 1] - c[np.maximum(0, i - window_length + 1)]) / window_length
    ref = reference_power or mms.max()
    on = np.nonzero(mms >= ref * 10 ** (cutoff_db / 10))[0]
    if len(on) == 0:
        return 0, 0
    begin = max(0, on[0] - window_length + 1)
    return begin, on[-1] + 1 - begin


@pytest.mark.parametrize("kw", [dict(), dict(cutoff_db=-40.0), dict(window_length=256,
                                                                     cutoff_db=-30.0),
                                dict(window_length=512, reference_power=1e-3, cutoff_db=-20.0),
                                dict(window_length=1024, reset_interval=-1)])
def test_nonsilent_region_against_numpy_and_dali(kw):
    xs = float_utterances(10)
    quiet = np.zeros(6000, f32)
    quiet[2500:3000] = noise(23, 500) * 0.01
    xs += [quiet, np.zeros(100, f32), noise(24, 10)]
    build = lambda fn, t, x: fn.nonsilent_region(x, **kw)
    begin, length = run(stoker_lib(), build, [xs])
    assert begin[2] == "int32" and length[2] == "int32" and begin[1] == length[1] == ""
    ref_kw = {k: v for k, v in kw.items() if k != "reset_interval"}
    for x, b, n in zip(xs, begin[0], length[0]):
        assert b.shape == () and n.shape == ()
        assert (int(b), int(n)) == nonsilent_ref(x, **ref_kw)
    compare_nonsilence_with_dali(build, xs, begin[0], length[0])


def compare_nonsilence_with_dali(build, xs, begin, length):
    """DALI keeps the moving sum of squares in float32 (recomputed every reset_interval): where
    a window's power is within 1e-4 of the threshold its answer moves by a sample or two, so
    the ends may differ by 2 samples at most (measured: 1)."""
    try:
        lib = real_dali()
    except pytest.skip.Exception:
        return
    (db, _, dt), (dn, _, _) = run(lib, build, [xs])
    assert dt == "int32"
    for b, n, rb, rn in zip(begin, length, db, dn):
        assert abs(int(b) - int(rb)) <= 2 and abs(int(b) + int(n) - int(rb) - int(rn)) <= 2


def test_nonsilent_region_integer_audio():
    xs = utterances(4)
    build = lambda fn, t, x: fn.nonsilent_region(x, cutoff_db=-35.0)
    begin, length = run(stoker_lib(), build, [xs])
    for x, b, n in zip(xs, begin[0], length[0]):
        assert (int(b), int(n)) == nonsilent_ref(x, cutoff_db=-35.0)
    compare_nonsilence_with_dali(build, xs, begin[0], length[0])
    # Only silence: (0, 0); an empty signal too (DALI 2.4 crashes on it).
    x = np.zeros(10, f32)
    x[3] = 1
    begin, length = run(stoker_lib(), lambda fn, t, x: fn.nonsilent_region(
        x, window_length=4, reference_power=100.0, cutoff_db=-10.0), [[x, np.zeros(0, f32)]])
    assert [int(v) for v in begin[0]] == [0, 0] and [int(v) for v in length[0]] == [0, 0]


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
def test_asr_preprocessing_chain_against_dali(batch):
    xs = float_utterances(10)[:batch]
    (out, layout, dtype), = vs_dali(asr_chain, [xs], rtol=1e-4)
    longest = max(x.size // 160 + 1 for x in xs)
    assert dtype == "float32" and layout == "ft"
    assert all(y.shape == (64, longest) for y in out)
    # Per feature over time: zero mean and unit variance on the frames of the utterance.
    for x, y in zip(xs, out):
        frames = x.size // 160 + 1
        np.testing.assert_allclose(y[:, :frames].mean(1), 0, atol=1e-4)
        np.testing.assert_allclose(y[:, :frames].std(1), 1, atol=1e-3)
        assert not y[:, frames:].any()


# ---------------------------------------------------------------- errors

def err(build, datas, layouts=None, exc=ValueError):
    return stoker_error(build, datas, layouts, exc)


X = [np.zeros(1000, f32)]
S = [np.zeros((257, 4), f32)]


def test_spectrogram_errors():
    e = err(lambda fn, t, x: fn.spectrogram(x, nfft=256), [X])
    check_error(e, "spectrogram", "argument 'nfft' is 256, smaller than window_length (512); "
                "the FFT must hold a whole window: give nfft >= window_length.")
    e = err(lambda fn, t, x: fn.spectrogram(x, nfft=0, window_length=0), [X])
    check_error(e, "spectrogram", "argument 'window_length' must be at least 1 and at most 2^24 "
                "(samples in a window), got 0.")
    # 64-bit values are not truncated to 32 bits
    e = err(lambda fn, t, x: fn.spectrogram(x, window_length=2**32 + 512), [X])
    check_error(e, "spectrogram", "argument 'window_length' must be at least 1 and at most 2^24 "
                "(samples in a window), got 4294967808.")
    e = err(lambda fn, t, x: fn.spectrogram(x, nfft=2**40), [X])
    check_error(e, "spectrogram", "argument 'nfft' must be at most 2^24, got 1099511627776.")
    e = err(lambda fn, t, x: fn.spectrogram(x, window_step=0), [X])
    check_error(e, "spectrogram", "argument 'window_step' must be at least 1 (samples between "
                "windows) and below 2^31, got 0.")
    e = err(lambda fn, t, x: fn.spectrogram(x, layout="xy"), [X])
    check_error(e, "spectrogram", "argument 'layout' must be \"ft\" (frequency-major) or \"tf\" "
                "(time-major), got \"xy\".")
    e = err(lambda fn, t, x: fn.spectrogram(x, power=3), [X])
    check_error(e, "spectrogram", "argument 'power' must be 1 (magnitude) or 2 (power), got 3.")
    e = err(lambda fn, t, x: fn.spectrogram(x, window_length=4, window_fn=[1.0, 2.0]), [X])
    check_error(e, "spectrogram", "argument 'window_fn' has 2 values, but window_length is 4; "
                "give one value per sample of the window.")
    e = err(lambda fn, t, x: fn.spectrogram(x), [[np.zeros(10, np.int16)]], exc=TypeError)
    check_error(e, "spectrogram", "the input must be float32 audio, got int16; convert it with "
                "fn.cast(x, dtype=types.FLOAT).")
    e = err(lambda fn, t, x: fn.spectrogram(x), [[X[0], np.zeros(0, f32)]])
    check_error(e, "spectrogram", "sample 1 (shape (0,)) is empty; a spectrogram needs at least "
                "one sample of audio.")
    e = err(lambda fn, t, x: fn.spectrogram(x, center_windows=False), [[np.zeros(100, f32)]])
    check_error(e, "spectrogram", "sample 0 (shape (100,)) is shorter than one window (512 "
                "samples) and center_windows is False, so no window fits; pad the signal or set "
                "center_windows=True.")
    e = err(lambda fn, t, x: fn.spectrogram(x), [[np.zeros((2, 100), f32)]])
    check_error(e, "spectrogram", "sample 0 (shape (2, 100)) is not one channel of audio; give a "
                "1-D signal (or one whose other extents are 1: (n, 1), (1, n)), e.g. mix channels "
                "down with decoders.audio(downmix=True).")


def test_power_spectrum_errors():
    e = err(lambda fn, t, x: fn.power_spectrum(x, nfft=0), [X])
    check_error(e, "power_spectrum", "argument 'nfft' must be at least 1, got 0; leave it out to "
                "transform the whole axis.")
    e = err(lambda fn, t, x: fn.power_spectrum(x, power=0), [X])
    check_error(e, "power_spectrum", "argument 'power' must be 1 (magnitude) or 2 (power), got 0.")
    e = err(lambda fn, t, x: fn.power_spectrum(x), [[np.zeros(2**25, f32)]])
    check_error(e, "power_spectrum", "argument 'nfft' would be 33554432 for sample 0 (shape "
                "(33554432,)) (its length along axis 0), more than 2^24; give a smaller nfft.")
    e = err(lambda fn, t, x: fn.power_spectrum(x, axis=2), [S])
    check_error(e, "power_spectrum", "argument 'axis' is 2, out of range for sample 0 (shape "
                "(257, 4)) of 2 dimensions; give an axis in [-2, 1].")
    e = err(lambda fn, t, x: fn.power_spectrum(x), [[np.zeros((3, 0), f32)]])
    check_error(e, "power_spectrum", "sample 0 (shape (3, 0)) is empty along axis 1; the "
                "transform needs at least one value.")
    e = err(lambda fn, t, x: fn.power_spectrum(x), [[np.zeros(8, np.float64)]], exc=TypeError)
    check_error(e, "power_spectrum", "the input must be float32 signal, got float64; convert it "
                "with fn.cast(x, dtype=types.FLOAT).")


def test_mel_filter_bank_errors():
    e = err(lambda fn, t, x: fn.mel_filter_bank(x, freq_low=-1.0), [S])
    check_error(e, "mel_filter_bank", "argument 'freq_low' must be >= 0 Hz, got -1.")
    e = err(lambda fn, t, x: fn.mel_filter_bank(x, sample_rate=16000, freq_high=9000.0), [S])
    check_error(e, "mel_filter_bank", "argument 'freq_high' is 9000 Hz, above the Nyquist "
                "frequency (8000 Hz for sample_rate 16000); give at most sample_rate / 2.")
    e = err(lambda fn, t, x: fn.mel_filter_bank(x, freq_low=5000.0, freq_high=4000.0), [S])
    check_error(e, "mel_filter_bank", "argument 'freq_low' is 5000 Hz, not below freq_high "
                "(4000 Hz); the bands need freq_low < freq_high.")
    e = err(lambda fn, t, x: fn.mel_filter_bank(x, sample_rate=0.0), [S])
    check_error(e, "mel_filter_bank", "argument 'sample_rate' must be a positive number of "
                "samples per second, got 0.")
    e = err(lambda fn, t, x: fn.mel_filter_bank(x, nfilter=0), [S])
    check_error(e, "mel_filter_bank", "argument 'nfilter' must be at least 1 and at most 65536 "
                "(the number of mel bands), got 0.")
    e = err(lambda fn, t, x: fn.mel_filter_bank(x, mel_formula="mel"), [S])
    check_error(e, "mel_filter_bank", "argument 'mel_formula' must be one of ['slaney', 'htk'], "
                "got 'mel'.")
    e = err(lambda fn, t, x: fn.mel_filter_bank(x), [S], ["xy"])
    check_error(e, "mel_filter_bank", "the input layout \"xy\" has no frequency axis 'f'; give a "
                "spectrogram laid out \"ft\" or \"tf\" (fn.spectrogram's layout), or no layout "
                "for (..., frequency, time).")
    e = err(lambda fn, t, x: fn.mel_filter_bank(x), [[np.zeros((1, 5), f32)]], ["ft"])
    check_error(e, "mel_filter_bank", "sample 0 (shape (1, 5)) has 1 frequency bin (axis 0); the "
                "filters need a spectrum of at least 2 bins (nfft >= 2).")
    e = err(lambda fn, t, x: fn.mel_filter_bank(x), [[np.zeros((9, 5), np.int16)]], exc=TypeError)
    check_error(e, "mel_filter_bank", "the input must be float32 spectrogram, got int16; convert "
                "it with fn.cast(x, dtype=types.FLOAT).")


def test_mfcc_errors():
    e = err(lambda fn, t, x: fn.mfcc(x, n_mfcc=0), [S])
    check_error(e, "mfcc", "argument 'n_mfcc' must be at least 1 (coefficients kept), got 0.")
    e = err(lambda fn, t, x: fn.mfcc(x, dct_type=5), [S])
    check_error(e, "mfcc", "argument 'dct_type' must be 1, 2, 3 or 4, got 5.")
    e = err(lambda fn, t, x: fn.mfcc(x, dct_type=1, normalize=True), [S])
    check_error(e, "mfcc", "argument 'normalize' is True, but DCT type I has no orthonormal "
                "form; use dct_type 2, 3 or 4, or normalize=False.")
    e = err(lambda fn, t, x: fn.mfcc(x, axis=2), [S])
    check_error(e, "mfcc", "argument 'axis' is 2, out of range for sample 0 (shape (257, 4)) of 2 "
                "dimensions; give an axis in [-2, 1].")
    e = err(lambda fn, t, x: fn.mfcc(x, n_mfcc=10**6), [[np.zeros((10**5, 1), f32)]])
    check_error(e, "mfcc", "argument 'n_mfcc' is 1000000: a table of 100000 x 100000 cosines for "
                "sample 0 (shape (100000, 1)), more than 2^26; give fewer coefficients.")
    e = err(lambda fn, t, x: fn.mfcc(x, dct_type=2**32 + 2), [S])
    check_error(e, "mfcc", "argument 'dct_type' must be 1, 2, 3 or 4, got 4294967298.")
    e = err(lambda fn, t, x: fn.mfcc(x, dct_type=1), [[np.zeros((1, 4), f32)]])
    check_error(e, "mfcc", "sample 0 (shape (1, 4)) has 1 value along axis 0; DCT type I needs "
                "at least 2.")
    e = err(lambda fn, t, x: fn.mfcc(x), [[np.zeros((9, 5), np.float64)]], exc=TypeError)
    check_error(e, "mfcc", "the input must be float32 mel spectrogram, got float64; convert it "
                "with fn.cast(x, dtype=types.FLOAT).")


def test_to_decibels_preemphasis_and_nonsilence_errors():
    e = err(lambda fn, t, x: fn.to_decibels(x, multiplier=0.0), [S])
    check_error(e, "to_decibels", "argument 'multiplier' must be a nonzero number (10 for power, "
                "20 for amplitude), got 0.")
    e = err(lambda fn, t, x: fn.to_decibels(x, reference=-1.0), [S])
    check_error(e, "to_decibels", "argument 'reference' must be a positive magnitude (or 0 for "
                "the largest value of each sample), got -1.")
    e = err(lambda fn, t, x: fn.to_decibels(x), [[np.zeros(4, np.int16)]], exc=TypeError)
    check_error(e, "to_decibels", "the input must be float32 magnitudes, got int16; convert it "
                "with fn.cast(x, dtype=types.FLOAT).")
    e = err(lambda fn, t, x: fn.preemphasis_filter(x, border="wrap"), [X])
    check_error(e, "preemphasis_filter", "argument 'border' must be one of ['zero', 'clamp', "
                "'reflect'], got 'wrap'.")
    e = err(lambda fn, t, x: fn.preemphasis_filter(x, dtype=t.FLOAT16), [X])
    check_error(e, "preemphasis_filter", "argument 'dtype' must be a numeric type other than "
                "float16 and bool (FLOAT by default), got float16.")
    e = err(lambda fn, t, x: fn.preemphasis_filter(x), [[np.zeros(3, np.bool_)]], exc=TypeError)
    check_error(e, "preemphasis_filter", "the input must be a numeric signal other than float16 "
                "and bool, got bool; convert it with fn.cast(x, dtype=types.FLOAT).")
    e = err(lambda fn, t, x: fn.nonsilent_region(x, window_length=0), [X])
    check_error(e, "nonsilent_region", "argument 'window_length' must be at least 1 (samples over "
                "which the short-term power is averaged) and below 2^31, got 0.")
    e = err(lambda fn, t, x: fn.nonsilent_region(x, reset_interval=0), [X])
    check_error(e, "nonsilent_region", "argument 'reset_interval' must be a positive number of "
                "samples, or -1 for never, got 0.")
    e = err(lambda fn, t, x: fn.nonsilent_region(x, reference_power=-1.0), [X])
    check_error(e, "nonsilent_region", "argument 'reference_power' must be a positive power (or 0 "
                "for the largest short-term power of each sample), got -1.")
    e = err(lambda fn, t, x: fn.nonsilent_region(x), [[np.zeros((2, 3), f32)]])
    check_error(e, "nonsilent_region", "sample 0 has shape (2, 3); give a 1-D signal (mix "
                "channels down first, e.g. decoders.audio(downmix=True)).")
