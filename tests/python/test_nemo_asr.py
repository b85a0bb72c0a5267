"""readers.nemo_asr: NeMo manifests written here over the shared LibriSpeech files, against
soundfile and DALI 2.4."""
import glob
import json
import re

import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def, types

from _dali_ref import real_dali
from conftest import TESTDATA

FLAC = sorted(glob.glob(str(TESTDATA / "audio" / "flac" / "*.flac")))


def manifest(tmp_path, entries, name="m.json"):
    p = tmp_path / name
    p.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return str(p)


def entries_for(paths, with_text=True):
    sf = pytest.importorskip("soundfile")
    out = []
    for k, p in enumerate(paths):
        e = {"audio_filepath": p, "duration": sf.info(p).duration}
        if with_text:
            e["text"] = f"utterance nº {k}"
        out.append(e)
    return out


def read_all(pdef, fn_, manifests, batch_size, iterations, **kw):
    @pdef(batch_size=batch_size, num_threads=2, device_id=None, seed=3)
    def pipe():
        out = fn_.readers.nemo_asr(manifest_filepaths=manifests, name="r", **kw)
        return tuple(out) if isinstance(out, (list, tuple)) else out

    p = pipe()
    p.build()
    out = []
    for _ in range(iterations):
        res = p.run()
        out.append([[np.array(o[i]) for i in range(len(o))] for o in res])
    return out, p


def test_outputs_filtering_and_dali(tmp_path):
    if not FLAC:
        pytest.skip("no LibriSpeech FLAC files")
    sf = pytest.importorskip("soundfile")
    m = manifest(tmp_path, entries_for(FLAC[:6]))
    kw = dict(read_idxs=True, min_duration=2.0, max_duration=5.5)
    (batches, p) = read_all(pipeline_def, fn, [m], 2, 2, **kw)
    durations = [sf.info(f).duration for f in FLAC[:6]]
    kept = [k for k, d in enumerate(durations) if 2.0 <= d <= 5.5]
    assert p.reader_meta("r")["epoch_size"] == len(kept)
    got = [b for it in batches for b in zip(*it)]
    for n, (audio, rate, text, idx) in enumerate(got[: len(kept)]):
        k = kept[n]
        ref = sf.read(FLAC[k], dtype="float32")[0]
        assert audio.dtype == np.float32 and np.array_equal(audio, ref)
        assert rate.shape == () and float(rate) == 16000
        assert text.dtype == np.uint8 and bytes(text).decode() == f"utterance nº {k}"
        assert idx.dtype == np.int64 and idx.shape == (1,) and idx[0] == n
    dfn, dtypes, dpdef = real_dali()
    (dbatches, _) = read_all(dpdef, dfn, [m], 2, 2, **kw)
    for it, dit in zip(batches, dbatches):
        for o, do in zip(it, dit):
            for a, b in zip(o, do):
                assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


def test_offset_duration_types_and_resampling(tmp_path):
    sf = pytest.importorskip("soundfile")
    f = FLAC[1]
    x = sf.read(f, dtype="int16")[0]
    m = manifest(tmp_path, [{"audio_filepath": f, "duration": 1.0},
                            {"audio_filepath": f, "offset": 0.5, "duration": 0.25, "text": "b"},
                            {"audio_filepath": f, "offset": 1.5, "duration": 9.0}])
    (batches, _) = read_all(pipeline_def, fn, [m], 3, 1, dtype=types.INT16, read_sample_rate=False)
    audio, text = batches[0]
    assert [a.shape for a in audio] == [(16000,), (4000,), (len(x) - 24000,)]
    assert np.array_equal(audio[0], x[:16000]) and np.array_equal(audio[1], x[8000:12000])
    assert np.array_equal(audio[2], x[24000:])
    assert [bytes(t) for t in text] == [b"", b"b", b""]
    (batches, _) = read_all(pipeline_def, fn, [m], 3, 1, sample_rate=8000, read_text=False,
                            downmix=False)
    audio, rate = batches[0]
    assert [a.shape for a in audio] == [(8000, 1), (2000, 1), ((len(x) - 24000 + 1) // 2, 1)]
    assert [float(r) for r in rate] == [8000] * 3
    # DALI 2.4 cuts the same parts.
    dfn, dtypes, dpdef = real_dali()
    (dbatches, _) = read_all(dpdef, dfn, [m], 3, 1, dtype=dtypes.INT16, read_sample_rate=False)
    (mine, _) = read_all(pipeline_def, fn, [m], 3, 1, dtype=types.INT16, read_sample_rate=False)
    for a, b in zip(mine[0][0], dbatches[0][0]):
        assert a.dtype == b.dtype and np.array_equal(a, b)


def test_sharding_reads_each_entry_exactly_once(tmp_path):
    m = manifest(tmp_path, entries_for(FLAC[:7]))
    seen = []
    for shard in range(3):
        @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
        def pipe():
            _, idx = fn.readers.nemo_asr(manifest_filepaths=[m], shard_id=shard, num_shards=3,
                                            read_sample_rate=False, read_text=False,
                                            read_idxs=True, name="r")
            return idx

        p = pipe()
        p.build()
        n = (shard + 1) * 7 // 3 - shard * 7 // 3  # DALI's shard bounds: floor(i * N / S)
        seen += [int(np.array(p.run()[0][0])[0]) for _ in range(n)]
    assert sorted(seen) == list(range(7))
    # Shuffled: the same entries, in another order, reproducibly.
    (b1, _) = read_all(pipeline_def, fn, [m], 7, 1, random_shuffle=True, read_idxs=True)
    order = [int(i[0]) for i in b1[0][3]]
    assert sorted(order) == list(range(7))
    (b2, _) = read_all(pipeline_def, fn, [m], 7, 1, random_shuffle=True, read_idxs=True)
    assert [int(i[0]) for i in b2[0][3]] == order


def strip(e):
    return re.sub(r" \(.*?py:\d+\)", "", str(e.value))


def test_errors(tmp_path):
    good = manifest(tmp_path, entries_for(FLAC[:2]))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"audio_filepath": FLAC[0]}) + "\n[1, 2]\n")
    with pytest.raises(ValueError) as e:
        read_all(pipeline_def, fn, [str(bad)], 1, 1)
    assert strip(e) == (f"fn.readers.nemo_asr: manifest '{bad}', line 2: a JSON array, not an "
                        "object; each line must be one JSON object with at least "
                        "\"audio_filepath\"")
    with pytest.raises(FileNotFoundError) as e:
        read_all(pipeline_def, fn, [str(tmp_path / "none.json")], 1, 1)
    assert strip(e) == (f"fn.readers.nemo_asr: cannot open the NeMo manifest "
                        f"'{tmp_path / 'none.json'}': no such file, or not readable; check "
                        "manifest_filepaths")
    with pytest.raises(ValueError) as e:
        read_all(pipeline_def, fn, [good], 1, 1, min_duration=100.0)
    assert strip(e) == ("fn.readers.nemo_asr: the manifests list no audio file whose duration "
                        "lies within min_duration=100 and max_duration=0 s; widen the bounds.")
    with pytest.raises(ValueError) as e:
        read_all(pipeline_def, fn, [good], 1, 1, dtype=types.FLOAT64)
    assert strip(e) == ("fn.readers.nemo_asr: argument 'dtype' must be INT16, INT32 or FLOAT (as "
                        "DALI), got FLOAT64; decode to one of them and use fn.cast for another "
                        "type.")
    # A corrupt audio file names itself; on_error='skip' reads the next good one instead.
    junk = tmp_path / "junk.wav"
    junk.write_bytes(b"RIFF" + bytes(100))
    mixed = manifest(tmp_path, [{"audio_filepath": str(junk)}, {"audio_filepath": FLAC[0]}],
                     "mixed.json")
    with pytest.raises(stoker.DecodeError) as e:
        read_all(pipeline_def, fn, [mixed], 1, 1)
    assert strip(e).startswith(f"fn.readers.nemo_asr: sample 0: '{junk}': not a readable audio "
                               "file (libsndfile: ")
    (batches, _) = read_all(pipeline_def, fn, [mixed], 1, 2, on_error="skip")
    sf = pytest.importorskip("soundfile")
    for it in batches:
        assert np.array_equal(it[0][0], sf.read(FLAC[0], dtype="float32")[0])
