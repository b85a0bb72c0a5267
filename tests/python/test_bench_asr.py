"""The benchmark suite's asr workload (bench/): DALI's speech examples' preprocessing on the
LibriSpeech utterances of ../shared/testdata/audio. stoker's graph against NVIDIA DALI 2.4 running
the same code (one batch: shapes, frame counts and values), the librosa peer against both, and
the suite's output check."""
import sys
from pathlib import Path

import numpy as np
import pytest

from _dali_ref import real_dali, stoker_lib

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import make_dataset  # noqa: E402
import peers  # noqa: E402
import stoker_contender  # noqa: E402

BATCH = 8


@pytest.fixture(scope="module")
def asr_data(tmp_path_factory, testdata):
    audio = testdata / "audio"
    if not (audio / "flac").is_dir():
        pytest.skip(f"no LibriSpeech test audio at {audio}")
    root = tmp_path_factory.mktemp("asr")
    stats = make_dataset.make_audio_dataset(root, 2 * BATCH, audio, verbose=False)
    return root, stats


def run_graph(lib, root, batches=2):
    fn, types, pipeline_def = lib

    @pipeline_def(batch_size=BATCH, num_threads=2, device_id=None, seed=3)
    def pipe():
        return stoker_contender.asr_graph(fn, types, str(root),
                                          str(root / make_dataset.AUDIO_FILE_LIST), shuffle=False)

    p = pipe()
    p.build()
    out = []
    for _ in range(batches):
        feats, frames = p.run()
        out.append(([np.array(feats[i]) for i in range(BATCH)],
                    np.array([int(np.array(frames[i])) for i in range(BATCH)])))
    return out


def test_dataset(asr_data):
    root, stats = asr_data
    files = make_dataset.list_audio(root)
    assert len(files) == stats["n"] == 2 * BATCH
    assert {lab for _, lab in files} == {0}
    assert stats["formats"] == {"wav": 6, "flac": 5, "ogg": 5}
    # utterance by utterance, format by format: wav, flac, ogg of the first, then the second
    assert [Path(f).suffix for f, _ in files[:4]] == [".wav", ".flac", ".ogg", ".wav"]
    assert 1.5 < stats["min_s"] <= stats["mean_s"] <= stats["max_s"] < 7
    assert all(Path(f).is_file() for f, _ in files)


def test_stoker_matches_dali(asr_data):
    root, _ = asr_data
    got, want = run_graph(stoker_lib(), root), run_graph(real_dali(), root)
    for (g_feats, g_frames), (w_feats, w_frames) in zip(got, want):
        np.testing.assert_array_equal(g_frames, w_frames)
        longest = -(-int(w_frames.max()) // 16) * 16
        for g, w, n in zip(g_feats, w_feats, w_frames):
            assert g.dtype == w.dtype == np.float32
            assert g.shape == w.shape == (64, longest)
            np.testing.assert_allclose(g, w, rtol=0, atol=1e-3)
            # normalized over time per band; zeros past the utterance's end
            np.testing.assert_allclose(w[:, :n].mean(axis=1), 0, atol=1e-4)
            np.testing.assert_allclose(w[:, :n].std(axis=1), 1, atol=1e-3)
            assert not w[:, n:].any()


def test_librosa_peer_matches(asr_data):
    """The peer computes the same features (it uses DALI's Hann window and clamp border)."""
    pytest.importorskip("librosa")
    pytest.importorskip("soundfile")
    pytest.importorskip("torch")
    root, _ = asr_data
    files = make_dataset.list_audio(root)
    (feats, frames), _ = run_graph(stoker_lib(), root)
    ds = peers._LibrosaASR(files)
    batch, lengths = peers._collate_asr([ds[i] for i in range(BATCH)])
    np.testing.assert_array_equal(lengths.numpy(), frames)
    assert tuple(batch.shape) == (BATCH,) + feats[0].shape
    np.testing.assert_allclose(batch.numpy(), np.stack(feats), rtol=0, atol=2e-3)


def test_check_asr_rejects_wrong_batches(asr_data):
    import run
    root, _ = asr_data
    (feats, frames), _ = run_graph(stoker_lib(), root)
    good = np.stack(feats)
    assert run._check_asr((good, frames), BATCH) is None
    assert run._check_asr((good[:, :, :-16], frames), BATCH) == (
        f"features padded to {good.shape[2] - 16} frames, expected {good.shape[2]} (the longest "
        f"utterance's {frames.max()} rounded up to a multiple of 16)")
    assert run._check_asr((good.astype(np.float64), frames), BATCH) == (
        f"features of shape {good.shape} and dtype float64, expected float32 ({BATCH}, 64, T)")
    bad = good.copy()
    bad[0, 0, 0] = np.nan
    assert run._check_asr((bad, frames), BATCH) == "features with NaN or infinity"
