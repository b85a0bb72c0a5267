"""decoders.audio and audio_resample: against the decoded references beside the test files,
soundfile (the same libsndfile), python-soxr / librosa (the same libsoxr) and DALI 2.4."""
import glob
import os
import re
import struct

import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def, types

from _dali_ref import real_dali, run, stoker_lib
from conftest import TESTDATA

AUDIO = TESTDATA / "audio"
EDGE = AUDIO / "edge"


def files(kind):
    out = sorted(glob.glob(str(AUDIO / kind / f"*.{kind}")))
    if not out:
        pytest.skip(f"no {kind} test files in {AUDIO}")
    return out


def blob(path):
    return np.fromfile(path, np.uint8)


def decode_with(lib, paths_or_blobs, **kw):
    datas = [blob(p) if isinstance(p, str) else p for p in paths_or_blobs]
    (audio, la, _), (rates, lr, _) = run(lib, lambda f, t, x: f.decoders.audio(x, **kw), [datas])
    return audio, [float(r) for r in rates], la, lr


def decode(paths_or_blobs, **kw):
    return decode_with(stoker_lib(), paths_or_blobs, **kw)


def dali_decode(paths_or_blobs, **kw):
    dfn, dtypes, _ = real_dali()
    kw = {k: (getattr(dtypes, v.name) if isinstance(v, types.DALIDataType) else v) for k, v in kw.items()}
    return decode_with(real_dali(), paths_or_blobs, **kw)


# ---- exact decoding ----------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["wav", "flac"])
def test_lossless_files_equal_their_references(kind):
    paths = files(kind)
    a16, rates, layout, rlayout = decode(paths, dtype=types.INT16)
    af, _, _, _ = decode(paths)
    a32, _, _, _ = decode(paths, dtype=types.INT32)
    assert layout == "" and rlayout == ""
    for p, x16, xf, x32, r in zip(paths, a16, af, a32, rates):
        ref = np.load(p[: -len(kind)] + "npy")
        assert x16.dtype == np.int16 and x16.shape == (len(ref), 1)
        assert np.array_equal(x16[:, 0], ref)
        assert xf.dtype == np.float32 and np.array_equal(xf[:, 0], ref.astype(np.float32) / 32768)
        assert x32.dtype == np.int32 and np.array_equal(x32[:, 0], ref.astype(np.int32) << 16)
        assert r == 16000.0


def test_ogg_vorbis_against_references():
    paths = files("ogg")
    a16, rates, _, _ = decode(paths, dtype=types.INT16)
    af, _, _, _ = decode(paths)
    for p, x16, xf in zip(paths, a16, af):
        ref = np.load(p[:-3] + "npy").astype(np.int64)
        assert x16.shape == (len(ref), 1)
        # The references come from another Vorbis decoder build: within one step of 16 bits.
        assert np.abs(x16[:, 0].astype(np.int64) - ref).max() <= 1
        # Peaks past full scale saturate (DALI 2.4 wraps them around to the other sign).
        over = np.abs(xf[:, 0]) > 1
        assert np.all(np.abs(x16[over, 0].astype(np.int64)) >= 32767)


def edge_files():
    return sorted(glob.glob(str(EDGE / "*.wav")) + glob.glob(str(EDGE / "*.flac")))


@pytest.mark.parametrize("dtype,sf_dtype", [(types.FLOAT, "float32"), (types.INT16, "int16"),
                                             (types.INT32, "int32")])
def test_edge_files_equal_soundfile(dtype, sf_dtype):
    sf = pytest.importorskip("soundfile")
    paths = edge_files()
    if not paths:
        pytest.skip("no edge audio files")
    audio, rates, _, _ = decode(paths, dtype=dtype)
    for p, a, r in zip(paths, audio, rates):
        ref, rate = sf.read(p, dtype=sf_dtype, always_2d=True)
        assert a.dtype == np.dtype(sf_dtype) and a.shape == ref.shape, p
        assert np.array_equal(a, ref), os.path.basename(p)
        assert r == rate


@pytest.mark.parametrize("kw", [{}, {"dtype": types.INT16}, {"dtype": types.INT32},
                                {"downmix": True}, {"downmix": True, "dtype": types.INT16},
                                {"downmix": True, "dtype": types.INT32}])
def test_equals_dali(kw):
    paths = edge_files() + files("flac")[:2] + files("wav")[:1]
    mine, rates, layout, _ = decode(paths, **kw)
    theirs, drates, dlayout, _ = dali_decode(paths, **kw)
    assert rates == drates and layout == dlayout
    for p, a, b in zip(paths, mine, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape, p
        assert np.array_equal(a, b), os.path.basename(p)


def test_ogg_equals_dali_but_saturates():
    paths = files("ogg")
    for dtype, tol in [(types.FLOAT, 3e-7), (types.INT16, 1)]:
        mine, _, _, _ = decode(paths, dtype=dtype)
        theirs, _, _, _ = dali_decode(paths, dtype=dtype)
        f, _, _, _ = decode(paths)
        for a, b, x in zip(mine, theirs, f):
            assert a.shape == b.shape
            inside = np.abs(x) <= 1  # DALI wraps values past full scale around
            assert np.abs(a[inside].astype(np.float64) - b[inside]).max() <= tol


def test_downmix_is_the_mean_of_the_channels():
    sf = pytest.importorskip("soundfile")
    p = str(EDGE / "sample_wav_format_extensible.wav")  # 6 channels
    x = sf.read(p, dtype="float32", always_2d=True)[0]
    (m,), _, _, _ = decode([p], downmix=True)
    w = np.float32(1 / 6)
    ref = x[:, 0] * w
    for c in range(1, 6):
        ref = ref + x[:, c] * w
    assert m.shape == (len(x),) and np.array_equal(m, ref)
    (m16,), _, _, _ = decode([p], downmix=True, dtype=types.INT16)
    assert np.array_equal(m16, np.clip(np.round(ref.astype(np.float64) * 32767), -32768, 32767))
    # A mono file with downmix is 1-D too.
    (mono,), _, _, _ = decode([files("wav")[0]], downmix=True)
    assert mono.ndim == 1


# ---- resampling --------------------------------------------------------------------------------

def test_resampling_length_rate_and_libsoxr():
    soxr = pytest.importorskip("soxr")
    p = files("wav")[0]
    x = np.load(p[:-3] + "npy").astype(np.float32) / 32768
    for rate in [8000, 22050, 44100, 16001, 12345.5]:
        (a,), (r,), _, _ = decode([p], sample_rate=rate, downmix=True)
        assert r == rate
        assert len(a) == int(np.ceil(len(x) * rate / 16000))  # DALI's length
        ref = soxr.resample(x, 16000, rate, quality="HQ")
        n = min(len(ref), len(a))
        assert abs(len(ref) - len(a)) <= 1
        assert np.abs(a[:n] - ref[:n]).max() < 1e-6


def test_resampling_against_librosa():
    librosa = pytest.importorskip("librosa")
    p = files("flac")[1]
    x = np.load(p[:-4] + "npy").astype(np.float32) / 32768
    (a,), _, _, _ = decode([p], sample_rate=22050, downmix=True)
    ref = librosa.resample(x, orig_sr=16000, target_sr=22050, res_type="soxr_hq")
    n = min(len(ref), len(a))
    assert np.abs(a[:n] - ref[:n]).max() < 1e-5


# Measured against DALI 2.4 (its Hann-windowed sinc, 16 lobes at quality 50) on the 10
# LibriSpeech WAVs: raising the rate (22.05, 44.1, 48 kHz) the results differ by at most 0.039,
# RMS 2.8% of the signal's (libsoxr's HQ passband ends at 91% of the input's Nyquist frequency,
# DALI's filter passes more of the top band); lowering it (8 kHz) DALI keeps the band above the
# new Nyquist frequency, folded back, which libsoxr removes: at most 0.121, RMS 8.9%.
@pytest.mark.parametrize("rate,max_tol,rms_tol", [(22050, 0.045, 0.032), (44100, 0.045, 0.032),
                                                   (48000, 0.045, 0.032), (8000, 0.14, 0.10)])
def test_resampling_against_dali(rate, max_tol, rms_tol):
    paths = files("wav")
    mine, rates, _, _ = decode(paths, sample_rate=rate, downmix=True)
    theirs, drates, _, _ = dali_decode(paths, sample_rate=rate, downmix=True)
    assert rates == drates
    for a, b in zip(mine, theirs):
        assert a.shape == b.shape
        assert np.abs(a - b).max() < max_tol
        assert np.sqrt(np.mean((a - b) ** 2)) < rms_tol * np.sqrt(np.mean(b ** 2))


def test_resampling_multichannel_int_and_per_sample_rates():
    p = str(EDGE / "bbb_2ch_44kHz.wav")
    (st,), (r,), _, _ = decode([p], sample_rate=16000)
    assert st.shape == (int(np.ceil(44100 * 16000 / 44100)), 2) and r == 16000
    (st16,), _, _, _ = decode([p], sample_rate=16000, dtype=types.INT16)
    assert np.array_equal(st16, np.clip(np.round(st.astype(np.float64) * 32767), -32768, 32767))
    (mono,), _, _, _ = decode([p], sample_rate=16000, downmix=True)
    # Mixing first, then resampling one channel: the mean of the resampled channels.
    assert np.abs(mono - st.mean(1)).max() < 1e-6
    # A per-sample sample_rate (a tensor argument).
    ps = [files("wav")[0]] * 3
    datas = [blob(q) for q in ps]
    rts = [np.float32(8000), np.float32(16000), np.float32(24000)]
    (audio, _, _), (rates, _, _) = run(
        stoker_lib(), lambda f, t, x, sr: f.decoders.audio(x, sample_rate=sr, downmix=True),
        [datas, rts])
    n = len(np.load(ps[0][:-3] + "npy"))
    assert [len(a) for a in audio] == [n // 2, n, n * 3 // 2]
    assert [float(r) for r in rates] == [8000, 16000, 24000]
    assert np.array_equal(audio[1], decode([ps[0]], downmix=True)[0][0])  # same rate: unchanged


def resample_with(lib, xs, layout=None, **kw):
    (out, lay, _), = run(lib, lambda f, t, x: f.audio_resample(x, **kw), [xs], layouts=[layout])
    return out, lay


def test_audio_resample_lengths_layouts_and_types():
    soxr = pytest.importorskip("soxr")
    x = (np.sin(np.arange(1001) * 0.3) * 0.5).astype(np.float32)
    x2 = np.stack([x, -x], 1)
    for kw, n in [({"scale": 2.5}, 2503), ({"in_rate": 3, "out_rate": 7}, 2336),
                  ({"out_length": 333}, 333), ({"scale": 0.0}, 0), ({"scale": 1.0}, 1001)]:
        (y,), lay = resample_with(stoker_lib(), [x], "t", **kw)
        assert y.shape == (n,) and y.dtype == np.float32 and lay == "t"
    (y,), _ = resample_with(stoker_lib(), [x], scale=1.0)
    assert np.array_equal(y, x)
    (y,), _ = resample_with(stoker_lib(), [x], in_rate=16000, out_rate=22050)
    ref = soxr.resample(x, 16000, 22050, quality="HQ")
    assert np.abs(y[:len(ref)] - ref[:len(y)]).max() < 1e-6
    (y2,), lay = resample_with(stoker_lib(), [x2], "tc", scale=0.5)
    assert y2.shape == (501, 2) and lay == "tc" and np.array_equal(y2[:, 0], -y2[:, 1])
    # Integer types stand for -1..1 and keep their type unless dtype says otherwise.
    xi = np.round(x * 32767).astype(np.int16)
    (yi,), _ = resample_with(stoker_lib(), [xi], scale=1.5)
    (yf,), _ = resample_with(stoker_lib(), [xi], scale=1.5, dtype=types.FLOAT)
    assert yi.dtype == np.int16 and yf.dtype == np.float32
    assert np.array_equal(yi, np.clip(np.round(yf.astype(np.float64) * 32767), -32768, 32767))
    (yu,), _ = resample_with(stoker_lib(), [x], scale=1.0, dtype=types.UINT8)
    assert np.array_equal(yu, np.clip(np.round((x.astype(np.float64) + 1) * 0.5 * 255), 0, 255))


def test_audio_resample_against_dali():
    real_dali()
    x = (np.sin(np.arange(4001) * 0.05) * 0.5).astype(np.float32)  # well inside both passbands
    xs = [x, np.stack([x, x[::-1]], 1)]
    for kw in [{"scale": 2.5}, {"in_rate": 16000, "out_rate": 22050}, {"out_length": 5000},
               {"scale": 0.75}]:
        for s in xs:
            (a,), la = resample_with(stoker_lib(), [s], **kw)
            (b,), lb = resample_with(real_dali(), [s], **kw)
            assert a.shape == b.shape and la == lb
            # Away from the ends (where the filters' tails differ) they agree closely.
            k = 64
            assert np.abs(a[k:-k] - b[k:-k]).max() < 2e-3, kw
    xi = np.round(x * 32767).astype(np.int16)
    for dt in [types.INT16, types.UINT8, types.FLOAT]:
        (a,), _ = resample_with(stoker_lib(), [xi], scale=1.0, dtype=dt)
        dfn, dtypes, _ = real_dali()
        (b,), _ = resample_with(real_dali(), [xi], scale=1.0, dtype=getattr(dtypes, dt.name))
        assert a.dtype == b.dtype
        assert np.abs(a.astype(np.float64) - b).max() <= (1 if dt != types.FLOAT else 1e-6)


# ---- errors ------------------------------------------------------------------------------------

def wav_header(rate=16000, channels=1, bits=16, frames=4):
    data = bytes(frames * channels * bits // 8)
    fmt = struct.pack("<HHIIHH", 1, channels, rate, rate * channels * bits // 8,
                      channels * bits // 8, bits)
    return (b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE" + b"fmt " + struct.pack("<I", 16)
            + fmt + b"data" + struct.pack("<I", len(data)) + data)


def decode_files(paths, **kw):
    @pipeline_def(batch_size=len(paths), num_threads=1, device_id=None, seed=1)
    def pipe():
        enc, _ = fn.readers.file(files=[str(p) for p in paths])
        return fn.decoders.audio(enc, **kw)

    return pipe().run()


def test_bad_files_name_the_operator_and_the_file(tmp_path):
    flac = open(files("flac")[0], "rb").read()
    wav = open(files("wav")[0], "rb").read()
    cases = {
        "empty.wav": (b"", "the data is empty (0 bytes); an audio file (WAV, FLAC, OGG, ...) was "
                           "expected"),
        "garbage.wav": (bytes(range(256)) * 4, "not a readable audio file (libsndfile: Format not "
                        "recognised); decoders.audio reads WAV, FLAC, OGG (Vorbis, Opus), MP3 and "
                        "the other formats of libsndfile libsndfile-1.2.0"),
        "head.wav": (wav[:30], None),
        "cut.flac": (flac[: len(flac) // 2], "the data ends after "),
        "rate0.wav": (wav_header(rate=0), None),
        "rate_huge.wav": (wav_header(rate=2_000_000_000), "the header gives a sample rate of "
                          "2000000000 Hz; 1 to 16777216 Hz was expected: the file is corrupt"),
    }
    for name, (data, message) in cases.items():
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(stoker.DecodeError) as e:
            decode_files([p])
        msg = str(e.value)
        assert re.match(rf"^fn\.decoders\.audio \(.*test_audio_decode\.py:\d+\), sample 0 "
                        rf"\('{re.escape(str(p))}'\): ", msg), msg
        if message:
            assert message in msg, msg
        else:
            assert "not a readable audio file (libsndfile: " in msg or "the file is corrupt" in msg, msg
    # on_error='skip' drops the bad files and the pipeline goes on.
    good = files("wav")[1]
    bad = [tmp_path / n for n in cases]
    out, rates = decode_files(bad + [good], on_error="skip")
    ref = np.load(good[:-3] + "npy")
    assert all(np.array_equal(np.array(out[i])[:, 0], ref.astype(np.float32) / 32768)
               for i in range(len(out)))


def test_whole_messages_of_bad_files(tmp_path):
    flac = open(files("flac")[0], "rb").read()
    p = tmp_path / "cut.flac"
    p.write_bytes(flac[: len(flac) // 2])
    with pytest.raises(stoker.DecodeError) as e:
        decode_files([p])
    assert re.sub(r"\(.*?py:\d+\)", "(L)", str(e.value)) == (
        f"fn.decoders.audio (L), sample 0 ('{p}'): the data ends after "
        + re.search(r"after (\d+) of", str(e.value)).group(1)
        + " of the 98080 frames the header gives (FLAC (Free Lossless Audio Codec), Signed 16 bit "
          "PCM): the file is truncated or corrupt")
    q = tmp_path / "many_channels.wav"
    q.write_bytes(wav_header(channels=5000, frames=1))
    with pytest.raises(stoker.DecodeError) as e:
        decode_files([q])
    assert re.sub(r"\(.*?py:\d+\)", "(L)", str(e.value)).startswith(
        f"fn.decoders.audio (L), sample 0 ('{q}'): ")


def test_bad_arguments():
    p = files("wav")[0]
    with pytest.raises(ValueError) as e:
        decode([p], dtype=types.UINT8)
    assert re.sub(r" \(.*?py:\d+\)", "", str(e.value)) == (
        "fn.decoders.audio: argument 'dtype' must be INT16, INT32 or FLOAT (as DALI), got UINT8; "
        "decode to one of them and use fn.cast for another type.")
    for bad in [0, -16000]:
        with pytest.raises(ValueError) as e:
            decode([p], sample_rate=bad)
        assert re.sub(r" \(.*?py:\d+\)", "", str(e.value)) == (
            f"fn.decoders.audio: argument 'sample_rate' must be a positive number of Hz, got {bad} "
            "for sample 0; leave it out to keep each file's own rate.")
    with pytest.raises(ValueError) as e:
        run(stoker_lib(), lambda f, t, x: f.decoders.audio(x), [[np.zeros(4, np.float32)]])
    assert re.sub(r" \(.*?py:\d+\)", "", str(e.value)) == (
        "fn.decoders.audio: argument 'input' must be encoded audio bytes (uint8), got float32; "
        "feed the file's bytes, e.g. from fn.readers.file.")
    with pytest.raises(ValueError) as e:
        run(stoker_lib(), lambda f, t, x: f.decoders.audio(x), [[np.zeros((4, 2), np.uint8)]])
    assert re.sub(r" \(.*?py:\d+\)", "", str(e.value)) == (
        "fn.decoders.audio: argument 'input' must be 1-D encoded bytes, but sample 0 has shape "
        "(4, 2).")


def test_audio_resample_bad_arguments():
    x = np.zeros(10, np.float32)
    strip = lambda e: re.sub(r" \(.*?py:\d+\)", "", str(e.value))  # noqa: E731
    with pytest.raises(ValueError) as e:
        resample_with(stoker_lib(), [x])
    assert strip(e) == ("fn.audio_resample: give exactly one of in_rate and out_rate (together), "
                        "scale, or out_length, to say how much to resample; none was given.")
    with pytest.raises(ValueError) as e:
        resample_with(stoker_lib(), [x], scale=2.0, out_length=3)
    assert strip(e) == ("fn.audio_resample: give exactly one of in_rate and out_rate (together), "
                        "scale, or out_length, to say how much to resample; more than one was "
                        "given.")
    with pytest.raises(ValueError) as e:
        resample_with(stoker_lib(), [x], in_rate=2.0)
    assert strip(e) == ("fn.audio_resample: argument 'out_rate' is missing: in_rate and out_rate "
                        "are given together (in_rate was given alone).")
    with pytest.raises(ValueError) as e:
        resample_with(stoker_lib(), [x], scale=-1.0)
    assert strip(e) == "fn.audio_resample: argument 'scale' must be 0 or more, got -1 for sample 0."
    with pytest.raises(ValueError) as e:
        resample_with(stoker_lib(), [x], in_rate=0.0, out_rate=1.0)
    assert strip(e) == "fn.audio_resample: argument 'in_rate' must be positive, got 0 for sample 0."
    with pytest.raises(ValueError) as e:
        resample_with(stoker_lib(), [np.zeros((2, 2, 2), np.float32)], scale=2.0)
    assert strip(e) == ("fn.audio_resample: argument 'input' must be audio of shape (frames,) or "
                        "(frames, channels), but sample 0 has shape (2, 2, 2).")
    with pytest.raises(ValueError) as e:
        resample_with(stoker_lib(), [x.astype(np.float64)], scale=2.0)
    assert strip(e) == ("fn.audio_resample: argument 'input' must be audio of int8, uint8, int16, "
                        "uint16, int32, uint32 or float32 (as DALI), got float64; cast it first "
                        "(fn.cast).")
    # Empty inputs give empty outputs.
    (y,), _ = resample_with(stoker_lib(), [np.zeros(0, np.float32)], scale=2.0)
    assert y.shape == (0,)
