"""DALI's operator names in stoker: the missing ones say so, the deprecated aliases work, and the
README's table of DALI's operators matches what this build has."""
import os
import re

import pytest

import stoker
from stoker import _dali_ops, fn, ops
from stoker.__main__ import dali_table
from stoker._schema import SCHEMAS, MissingOperatorError

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def _missing_fn_name():
    """A DALI operator stoker does not have (any: the list shrinks as stoker grows)."""
    for name, (_, replaced_by) in sorted(_dali_ops.FN.items()):
        if not replaced_by and name not in SCHEMAS and "." in name:
            return name
    pytest.skip("stoker has every DALI operator")


def _resolve(module, path):
    for part in path.split("."):
        module = getattr(module, part)
    return module


def test_missing_dali_operator_names_itself():
    name = _missing_fn_name()
    backends = ", ".join(_dali_ops.FN[name][0])
    with pytest.raises(NotImplementedError) as e:
        _resolve(fn, name)
    assert str(e.value) == (
        f"fn.{name} is a DALI operator stoker does not have yet (DALI runs it on: {backends}). "
        "The table of DALI's operators in stoker's README (or `python -m stoker ops --dali`) "
        f"says which it has; until fn.{name} comes, fn.python_function can run your own code "
        "in the pipeline.")
    # Also an AttributeError: feature probes keep working.
    parent, _, leaf = name.rpartition(".")
    assert not hasattr(_resolve(fn, parent), leaf)
    assert getattr(_resolve(fn, parent), leaf, "absent") == "absent"


def test_missing_ops_class_names_itself():
    name = _missing_fn_name()
    cls = next(c for c, f in _dali_ops.OPS.items() if f == name)
    with pytest.raises(MissingOperatorError, match=rf"^ops\.{re.escape(cls)} is a DALI operator "
                                                   r"stoker does not have yet"):
        _resolve(ops, cls)


def test_unknown_name_is_an_attribute_error_with_a_suggestion():
    with pytest.raises(AttributeError) as e:
        fn.rezise
    assert not isinstance(e.value, NotImplementedError)
    assert str(e.value) == ("fn.rezise is neither a stoker nor a DALI operator. Did you mean "
                            "fn.resize? `python -m stoker ops` lists stoker's operators.")
    with pytest.raises(AttributeError, match=r"^fn\.readers\.fil is neither .* Did you mean "
                                             r"fn\.readers\.file\?"):
        fn.readers.fil


def test_deprecated_dali_names_are_the_operators_they_stand_for():
    for alias, target in [("image_decoder", "decoders.image"), ("file_reader", "readers.file"),
                          ("coin_flip", "random.coin_flip"),
                          ("experimental.decoders.image_crop", "decoders.image_crop")]:
        assert _dali_ops.FN[alias][1] == target
        f = _resolve(fn, alias)
        assert f.__doc__ == _resolve(fn, target).__doc__
    assert ops.FileReader.schema_name == "readers.file"
    assert ops.ImageDecoder.schema_name == "decoders.image"
    assert ops.readers.File.schema_name == "readers.file"
    assert ops.random.CoinFlip.schema_name == "random.coin_flip"


def test_deprecated_alias_runs(tmp_path):
    from PIL import Image
    import numpy as np
    (tmp_path / "a").mkdir()
    Image.fromarray(np.full((4, 6, 3), 9, np.uint8)).save(tmp_path / "a" / "x.png")

    @stoker.pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        data, _ = fn.file_reader(file_root=str(tmp_path))
        return fn.image_decoder(data)

    p = pipe()
    (out,) = p.run()
    assert out.as_array().shape == (1, 4, 6, 3) and (out.as_array() == 9).all()


def test_readme_table_is_current():
    if not stoker._C.built_with_cuda:
        pytest.skip("the README's table describes a build with CUDA (GPU backends)")
    text = open(README).read()
    m = re.search(r"<!-- dali-operators:begin -->\n(.*?)\n<!-- dali-operators:end -->", text,
                  re.S)
    assert m, "README.md has no dali-operators section"
    assert m.group(1) == dali_table(), (
        "README.md's table of DALI's operators is out of date: replace the section with the "
        "output of `python -m stoker ops --dali`")
