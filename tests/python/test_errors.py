"""Bad arguments and bad input: clear errors naming the operator, the argument or the file."""
import gc
import os
import shutil

import pytest

import stoker


def os_threads():
    """Threads of this process, C++ ones included (after collecting dead pipelines)."""
    gc.collect()
    return len(os.listdir("/proc/self/task"))
from stoker import fn, pipeline_def, types


def one_op_pipe(make, batch_size=2):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=1)
    def pipe():
        return make()
    return pipe()


def test_unknown_argument_names_operator_and_suggests():
    with pytest.raises(TypeError, match=r"fn.random.uniform got an unexpected argument 'rnage'.*'range'"):
        one_op_pipe(lambda: fn.random.uniform(rnage=(0, 1)))


def test_wrong_type_names_argument_expected_and_given():
    with pytest.raises(TypeError, match=r"^fn\.random\.coin_flip \(test_errors\.py:\d+\): argument 'probability' expects float, got str 'high'"):
        one_op_pipe(lambda: fn.random.coin_flip(probability="high"))


def test_out_of_range_value():
    with pytest.raises(ValueError, match=r"^fn\.random\.coin_flip \(test_errors\.py:\d+\): argument 'probability' must be in \[0, 1\], got 1.5"):
        one_op_pipe(lambda: fn.random.coin_flip(probability=1.5))


def test_wrong_list_length():
    with pytest.raises(ValueError, match=r"argument 'range' takes 2 values, got 3"):
        one_op_pipe(lambda: fn.random.uniform(range=(0, 1, 2)))


def test_constant_only_argument_rejects_a_tensor():
    with pytest.raises(TypeError, match="argument 'dtype' must be a constant"):
        one_op_pipe(lambda: fn.cast(fn.random.uniform(), dtype=fn.random.uniform()))


def test_fn_outside_a_pipeline():
    # Other operators make a detached node there, as in DALI (test_dali_api.py); an
    # external_source needs the pipeline it feeds.
    with pytest.raises(RuntimeError, match="must be called while a pipeline is being defined"):
        fn.external_source(source=lambda: None)


def test_missing_backend():
    with pytest.raises(ValueError, match="fn.random.beta has no 'gpu' backend in this build of "
                                         "stoker; it runs on: cpu"):
        one_op_pipe(lambda: fn.random.beta(device="gpu"))


def test_bad_pipeline_arguments():
    with pytest.raises(ValueError, match="batch_size must be >= 1, got 0"):
        stoker.Pipeline(batch_size=0)
    with pytest.raises(TypeError, match="num_threads must be an int"):
        stoker.Pipeline(batch_size=1, num_threads="4")


def test_missing_file_root(tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(FileNotFoundError, match=r"fn.readers.file .*file_root '.*nope' does not exist"):
        one_op_pipe(lambda: fn.readers.file(file_root=str(missing))).build()


def test_empty_folder(tmp_path):
    (tmp_path / "class0").mkdir()
    with pytest.raises(ValueError, match=r"fn.readers.file"):
        one_op_pipe(lambda: fn.readers.file(file_root=str(tmp_path))).build()


def test_file_list_naming_a_missing_file(tmp_path, jpeg_files):
    lst = tmp_path / "list.txt"
    lst.write_text(f"{jpeg_files[0][0]} 0\n{tmp_path}/gone.jpg 1\n")
    p = one_op_pipe(lambda: fn.readers.file(file_list=str(lst)))
    with pytest.raises(FileNotFoundError, match=r"fn.readers.file.*gone.jpg"):
        p.run()


def decode_pipe(files):
    @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(files=[str(f) for f in files])
        return fn.decoders.image(jpegs)
    return pipe()


def test_non_image_file(tmp_path):
    bad = tmp_path / "notes.jpg"
    bad.write_text("this is not an image at all")
    with pytest.raises(stoker.DecodeError, match=r"fn.decoders.image.*notes.jpg"):
        decode_pipe([bad]).run()


def test_truncated_jpeg(tmp_path, jpeg_files):
    data = open(jpeg_files[0][0], "rb").read()
    bad = tmp_path / "truncated.jpg"
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(stoker.DecodeError, match=r"fn.decoders.image.*truncated.jpg"):
        decode_pipe([jpeg_files[1][0], bad]).run()


def test_a_pipeline_that_raised_keeps_running_and_deletes_cleanly(tmp_path, jpeg_files):
    data = open(jpeg_files[0][0], "rb").read()
    bad = tmp_path / "truncated.jpg"
    bad.write_bytes(data[:1000])
    good = jpeg_files[1][0]
    base = os_threads()

    @pipeline_def(batch_size=1, num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(files=[str(bad), good])
        return fn.decoders.image(jpegs)

    p = pipe()
    with pytest.raises(stoker.DecodeError):
        p.run()
    (img,) = p.run()  # the next batch (the good file) still comes
    assert img.source_info(0) == good
    del p
    gc.collect()
    assert os_threads() == base


def test_deleting_a_running_pipeline_joins_its_threads(jpeg_dir):
    base = os_threads()

    @pipeline_def(batch_size=8, num_threads=3, device_id=None, seed=1, prefetch_queue_depth=2)
    def pipe():
        jpegs, _ = fn.readers.file(file_root=str(jpeg_dir))
        return fn.decoders.image(jpegs)

    p = pipe()
    p.run()
    assert os_threads() > base  # the producer and 3 workers
    del p
    gc.collect()
    assert os_threads() == base


def test_reader_skip_policy_fills_the_batch_with_the_next_files(tmp_path, jpeg_files, caplog):
    good = [p for p, _ in jpeg_files[:6]]
    files = good[:2] + [str(tmp_path / "gone.jpg")] + good[2:]

    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=1)
    def pipe():
        data, labels = fn.readers.file(files=files, on_error="skip", name="Reader")
        return data, labels

    p = pipe()
    (data, labels) = p.run()
    # The bad file's place is taken by the next file of the epoch.
    assert [data.source_info(i) for i in range(4)] == [good[0], good[1], good[3], good[2]]
    (data, labels) = p.run()  # the rest of the epoch, then the next one begins
    assert [data.source_info(i) for i in range(4)] == good[4:6] + good[:2]
    stats = p.error_stats()
    (op, st), = stats.items()
    assert op.startswith("fn.readers.file") and st["skipped"] == 1
    assert st["samples"] == [files[2]]
    # The bad file is logged once, and not delivered again in later epochs.
    for _ in range(3):
        (data, _l) = p.run()
        assert files[2] not in [data.source_info(i) for i in range(4)]
    assert p.error_stats()[op]["skipped"] == 1
    err = "\n".join(r.getMessage() for r in caplog.records if r.name == "stoker")
    assert err.count("stoker: skipped") == 1 and "gone.jpg" in err


@pytest.mark.parametrize("where", ["header", "scan"])
def test_decoder_skip_and_replace(tmp_path, jpeg_files, where):
    data = open(jpeg_files[0][0], "rb").read()
    bad = tmp_path / f"bad_{where}.jpg"
    # A broken header fails at setup (peek); a truncated scan fails while decoding.
    bad.write_bytes(b"\xff\xd8\xff\xe0junk" if where == "header" else data[: len(data) // 2])
    good = [p for p, _ in jpeg_files[1:5]]
    files = [good[0], str(bad)] + good[1:]

    @pipeline_def(batch_size=2, num_threads=2, device_id=None, seed=1)
    def skipping():
        jpegs, _ = fn.readers.file(files=files)
        return fn.decoders.image(jpegs, on_error="skip")

    p = skipping()
    seen = []
    for _ in range(2):
        (img,) = p.run()
        seen += [img.source_info(i) for i in range(len(img))]
    assert seen == good  # the bad file's place is taken by the next one
    (st,) = p.error_stats().values()
    assert st["skipped"] == 1 and st["samples"] == [str(bad)]

    @pipeline_def(batch_size=2, num_threads=2, device_id=None, seed=1)
    def replacing():
        jpegs, _ = fn.readers.file(files=files)
        return fn.decoders.image(jpegs, on_error="replace", fallback_shape=(4, 5), fallback_value=7)

    p = replacing()
    (img,) = p.run()
    assert img.source_info(1) == str(bad)
    if where == "header":
        assert img[1].shape == (4, 5, 3)
    assert (img[1] == 7).all()
    (st,) = p.error_stats().values()
    assert st["replaced"] == 1


def test_named_argument_from_a_gpu_node_is_refused():
    """Operators read their named arguments on the host (as in DALI): a GPU node there is an
    error when the graph is written, not a read of device memory from the host."""
    import numpy as np

    @pipeline_def(batch_size=2, num_threads=1, device_id=0)
    def pipe():
        x = fn.external_source(source=lambda: [np.ones(5, np.float32)] * 2)
        k = fn.external_source(source=lambda: [np.float32(0.5)] * 2)
        return fn.preemphasis_filter(x.gpu(), preemph_coeff=k.gpu())

    with pytest.raises(ValueError) as e:
        pipe()
    assert str(e.value) == ("fn.preemphasis_filter: argument 'preemph_coeff' is given a GPU node; "
                            "named arguments take CPU data. Pass the node from before .gpu().")
