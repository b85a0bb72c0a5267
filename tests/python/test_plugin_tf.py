"""stoker.plugin.tf: a tf.data.Dataset from a pipeline, with static shapes and dtypes.

TensorFlow runs in a process of its own: with TensorFlow loaded first, PyTorch's first
optimizer (which loads triton) crashes the process (TensorFlow 2.21 and torch 2.14 wheels), so
the main test process never imports TensorFlow. The test below re-runs this file in a child
pytest with STOKER_TF_CHILD=1, where the real tests run."""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

IN_CHILD = os.environ.get("STOKER_TF_CHILD") == "1"


def test_tensorflow_cases_in_their_own_process():
    if IN_CHILD:
        pytest.skip("this is the child process")
    if importlib.util.find_spec("tensorflow") is None:
        pytest.skip("TensorFlow is not installed")
    env = dict(os.environ, STOKER_TF_CHILD="1", TF_CPP_MIN_LOG_LEVEL="2")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-W", "ignore::UserWarning", __file__],
                       capture_output=True, text=True, env=env, timeout=600,
                       cwd=os.path.dirname(os.path.abspath(__file__)))
    tail = r.stdout[-4000:] + r.stderr[-2000:]
    assert r.returncode == 0, tail
    assert " passed" in r.stdout and "failed" not in r.stdout, tail


if IN_CHILD:
    tf = pytest.importorskip("tensorflow")
    from stoker import fn, pipeline_def, types  # noqa: E402
    from stoker.plugin.tf import DALIDataset, LastBatchPolicy, StokerDataset, to_tf  # noqa: E402


def image_pipe(files, batch_size=2, pad=False):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, labels = fn.readers.file(files=files, labels=list(range(1, len(files) + 1)),
                                        pad_last_batch=pad, name="Reader")
        images = fn.resize(fn.decoders.image(jpegs), resize_x=16, resize_y=8)
        return fn.cast(images, dtype=types.FLOAT) * (1 / 255), labels
    return pipe()


def test_static_shapes_and_dtypes_are_inferred(seven):
    ds = StokerDataset(image_pipe(seven, pad=True), reader_name="Reader")
    images_spec, labels_spec = ds.element_spec
    assert images_spec.dtype == tf.float32 and labels_spec.dtype == tf.int32
    assert images_spec.shape.as_list() == [2, None, None, None]
    assert labels_spec.shape.as_list() == [2, None]
    assert DALIDataset is StokerDataset


def test_one_pass_is_one_epoch_with_the_last_batch_policy(seven):
    ds = StokerDataset(image_pipe(seven, pad=True), output_map=["images", "labels"],
                       reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL,
                       output_shapes=[(None, 8, 16, 3), (None, 1)])
    assert ds.element_spec["images"].shape.as_list() == [None, 8, 16, 3]
    assert len(ds) == 4
    for _ in range(2):
        labels = [b["labels"].numpy().reshape(-1).tolist() for b in ds]
        assert labels == [[1, 2], [3, 4], [5, 6], [7]]
    images = next(iter(ds))["images"]
    assert images.shape == (2, 8, 16, 3) and images.dtype == tf.float32
    assert 0 <= float(tf.reduce_min(images)) and float(tf.reduce_max(images)) <= 1


def test_pixels_match_the_pipeline(seven):
    ref = image_pipe(seven)
    ref_images = ref.run()[0].as_array()
    ds = StokerDataset(image_pipe(seven), output_dtypes=(tf.float32, tf.int32))
    images, labels = next(iter(ds))
    np.testing.assert_array_equal(images.numpy(), ref_images)
    assert labels.numpy().reshape(-1).tolist() == [1, 2]


def test_without_epochs_the_dataset_is_endless(seven):
    ds = StokerDataset(image_pipe(seven))
    assert ds.cardinality() == tf.data.UNKNOWN_CARDINALITY
    labels = [b[1].numpy().reshape(-1).tolist() for b in ds.take(5)]
    assert labels == [[1, 2], [3, 4], [5, 6], [7, 1], [2, 3]]


def test_keras_fit_runs_on_the_dataset(seven):
    ds = StokerDataset(image_pipe(seven, pad=True), reader_name="Reader",
                       last_batch_policy=LastBatchPolicy.DROP,
                       output_shapes=[(2, 8, 16, 3), (2, 1)])
    ds = ds.map(lambda x, y: (x, y - 1))
    model = tf.keras.Sequential([tf.keras.Input((8, 16, 3)), tf.keras.layers.Flatten(),
                                 tf.keras.layers.Dense(7)])
    model.compile(optimizer=tf.keras.optimizers.Adam(1e-2),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    assert len(ds) == 3
    hist = model.fit(ds, epochs=3, verbose=0)
    assert len(hist.history["loss"]) == 3


def test_errors(seven):
    with pytest.raises(TypeError, match="output_dtypes"):
        StokerDataset(image_pipe(seven), output_dtypes=(tf.uint8, tf.int32))
    with pytest.raises(ValueError, match="output_shapes"):
        StokerDataset(image_pipe(seven), output_shapes=[(2, 9, 16, 3), (2, 1)])
    with pytest.raises(ValueError, match="output_map"):
        StokerDataset(image_pipe(seven), output_map=["only_one"])

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def ragged():
        jpegs, _ = fn.readers.file(files=seven)
        return jpegs

    with pytest.raises(ValueError, match="different shapes"):
        StokerDataset(ragged())


def test_to_tf_through_dlpack():
    @pipeline_def(batch_size=3, num_threads=1, device_id=None, seed=2)
    def pipe():
        return (fn.random.uniform(range=(0, 1), shape=(4, 5)),
                fn.random.coin_flip(shape=(3,), dtype=types.BOOL))

    x, b = pipe().run()
    t = to_tf(x)
    assert t.dtype == tf.float32 and t.shape == (3, 4, 5)
    np.testing.assert_array_equal(t.numpy(), x.as_array())
    tb = to_tf(b)
    assert tb.dtype == tf.bool
    np.testing.assert_array_equal(tb.numpy(), b.as_array())


if not IN_CHILD:  # the cases above are collected only in the child process
    for _name, _obj in list(globals().items()):
        if _name.startswith("test_") and _name != "test_tensorflow_cases_in_their_own_process":
            _obj.__test__ = False
