"""Pipeline.serialize() / Pipeline.deserialize(): stoker's own versioned format.

A serialized pipeline is one ASCII header line and a JSON body:

    stoker.pipeline <format version> <bytes in the body> <sha256 of the body>\\n
    {"pipeline": {...parameters...}, "operators": [...], "outputs": [...]}

The header lets a foreign, truncated, damaged or newer file be told apart and named before
the body is read. The body holds the pipeline's parameters (those that change its batches:
batch size, seed, threads, device, queue depth, executor mode, checkpointing, output checks)
and the graph as recorded: every operator that the outputs need (and the preserve=True ones),
in definition order, with its device, name, arguments, argument inputs, inputs, number of
outputs and where it was defined (so errors of the deserialized pipeline name the original
line). Enum arguments are written by name (DALIDataType "FLOAT"), not by number. An operator's
internal ids (external_source's and python_function's links to their Python side) are not
written: deserializing makes new ones.

Pipelines that DALI serialized (protobuf: DALI's Pipeline.serialize(), Triton's model.dali) are
read too: src/pipeline/dali_format.cc turns them into the same body (the stoker build needs
libprotobuf), DALI's operator and argument names mapped to stoker's.

What cannot travel: Python code. An external_source with a `source` (fed by name instead,
with ``pipe.feed_input(name, data)``, as a DALI user does after deserializing) and
python_function / numba_function raise ValueError naming the operator.
"""
import hashlib
import json
import weakref

from . import _C
from . import types as _types

MAGIC = b"stoker.pipeline"
VERSION = 1  # the format this stoker writes, and the newest it reads

# Pipeline parameters that travel, in Pipeline.__init__'s names.
PARAMS = ("batch_size", "num_threads", "device_id", "seed", "prefetch_queue_depth",
          "exec_pipelined", "exec_async", "enable_checkpointing", "output_dtype", "output_ndim",
          "output_layout")

# Arguments that link an operator to its Python side in this process only.
_PROCESS_IDS = ("_source_id", "_function_id")

_ENUMS = {f"stoker.types.{n}": getattr(_types, n)
          for n in ("DALIDataType", "DALIImageType", "DALIInterpType")}

_PY_FUNCTIONS = ("python_function", "dl_tensor_python_function")

_FOREIGN_HINT = ("pass the bytes Pipeline.serialize() returned (or the file "
                 "serialize(filename=...) wrote), unchanged")


# ------------------------------------------------------------------------------- arguments
def _arg_types(schema_name):
    from ._schema import SCHEMAS
    return {a["name"]: a["type"] for a in SCHEMAS[schema_name]["args"]}


def encode_arg(arg_type, value):
    """An argument's value (as the schema check returned it) -> a JSON value. Enums go by
    name: {"DALIDataType": "FLOAT"}."""
    enum = _ENUMS.get(arg_type)
    if enum is not None and isinstance(value, int) and not isinstance(value, bool):
        try:
            return {enum.__name__: enum(value).name}
        except ValueError:
            pass  # a number the enum does not name: kept as a number (the schema took it)
    return value


def decode_arg(arg_type, value):
    enum = _ENUMS.get(arg_type)
    if isinstance(value, dict):
        if enum is None or set(value) != {enum.__name__} or not isinstance(
                value[enum.__name__], str) or value[enum.__name__] not in enum.__members__:
            raise ValueError(f"{value!r} is not a value of {arg_type}")
        return enum[value[enum.__name__]]
    return value


def _encode_dtypes(v):
    """output_dtype: None, one type or a list of them (None: any) -> names."""
    if v is None:
        return None
    if isinstance(v, (list, tuple)):
        return [_encode_dtypes(x) for x in v]
    return _types.DALIDataType(v).name if not isinstance(v, str) else v


def _decode_dtypes(v):
    if v is None:
        return None
    if isinstance(v, list):
        return [_decode_dtypes(x) for x in v]
    return _types.DALIDataType[v]


# --------------------------------------------------------------------------------- writing
def _cannot_serialize(pipe, rec):
    """The ValueError for an operator that holds Python code, or None."""
    where = f"fn.{rec.schema}" + (f" ({rec.location})" if rec.location else "")
    if rec.schema == "external_source":
        es = next((e for e in pipe._external_sources if e.record() is rec), None)
        if es is not None and es._kind == "video":
            return ValueError(
                f"Pipeline.serialize(): {es.where} cannot be serialized yet: stoker builds it "
                "in Python from an external source that cuts the fed videos into sequences and "
                "decoders.video.")
        if es is not None and es._kind != "feed":
            return ValueError(
                f"Pipeline.serialize(): {where} has a source= (a Python "
                f"{'generator function' if es._kind == 'genfunc' else es._kind}), which cannot "
                "be serialized. Leave the source out and give the external_source a name "
                "(fn.external_source(name=\"...\")); feed the deserialized pipeline with "
                "pipe.feed_input(name, data) before each run().")
        if not rec.name:
            return ValueError(
                f"Pipeline.serialize(): {where} has no name, and a deserialized pipeline's "
                "external sources are fed by name. Give it one (fn.external_source(name="
                "\"...\")) and feed it with pipe.feed_input(name, data).")
    if rec.schema in _PY_FUNCTIONS:
        fid = rec.args.get("_function_id")
        pf = next((f for f in pipe.__dict__.get("_python_functions", ())
                   if f.state.id == fid), None)
        what = pf.where if pf is not None else where  # (numba_function names itself)
        return ValueError(
            f"Pipeline.serialize(): {what} runs a Python function, which cannot be serialized "
            "(as in DALI). Keep such a pipeline in Python (build it from its code), or compute "
            "that step outside the pipeline and feed its result through a named "
            "fn.external_source.")
    return None


def dumps(pipe):
    """The serialized form (bytes) of a defined pipeline."""
    kept, outputs = pipe._kept_ops()
    index = {id(r): k for k, r in enumerate(kept)}
    ref = lambda n: [index[id(n.op)], n.output]  # noqa: E731
    ops = []
    for r in kept:
        err = _cannot_serialize(pipe, r)
        if err is not None:
            raise err
        types = _arg_types(r.schema)
        op = {"op": r.schema, "device": r.device, "name": r.name, "preserve": bool(r.preserve),
              "num_outputs": r.num_outputs, "location": r.location,
              "args": {k: encode_arg(types.get(k), v) for k, v in sorted(r.args.items())
                       if k not in _PROCESS_IDS},
              "tensor_args": {k: ref(n) for k, n in sorted(r.tensor_args.items())},
              "inputs": [ref(n) for n in r.inputs]}
        if r.schema == "external_source":
            es = next((e for e in pipe._external_sources if e.record() is r), None)
            op["external_source"] = {"timeout": getattr(es, "timeout", None),
                                     "gpu": bool(getattr(es, "gpu", False))}
        ops.append(op)
    dtype, ndim, layout = pipe._output_descs
    params = {"batch_size": pipe._batch_size, "num_threads": pipe._num_threads,
              "device_id": pipe._device_id, "seed": pipe._seed,
              "prefetch_queue_depth": pipe._prefetch_queue_depth,
              "exec_pipelined": pipe._exec_pipelined, "exec_async": pipe._exec_async,
              "enable_checkpointing": pipe._enable_checkpointing,
              "output_dtype": _encode_dtypes(dtype),
              "output_ndim": list(ndim) if isinstance(ndim, (list, tuple)) else ndim,
              "output_layout": list(layout) if isinstance(layout, (list, tuple)) else layout}
    body = json.dumps({"pipeline": params, "operators": ops,
                       "outputs": [ref(o) for o in outputs]},
                      separators=(",", ":"), ensure_ascii=True).encode("ascii")
    header = b"%s %d %d %s\n" % (MAGIC, VERSION, len(body),
                                 hashlib.sha256(body).hexdigest().encode("ascii"))
    return header + body


# --------------------------------------------------------------------------------- reading
def loads(data):
    """The body (a dict) of a serialized pipeline; ValueError naming what is wrong."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    elif isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    elif not isinstance(data, bytes):
        raise TypeError(f"Pipeline.deserialize: serialized_pipeline must be the bytes "
                        f"Pipeline.serialize() returned, got {type(data).__name__}.")
    if not data:
        raise ValueError(f"Pipeline.deserialize: the serialized pipeline is empty; "
                         f"{_FOREIGN_HINT}.")
    if not data.startswith(MAGIC + b" "):  # DALI's (protobuf), or neither
        doc = json.loads(_C.dali_pipeline_document(data))
        _check_shape(doc)
        return doc
    end = data.find(b"\n", 0, 200)
    fields = data[:end].split(b" ") if end >= 0 else []
    ok = (len(fields) == 4 and fields[1].isdigit() and fields[2].isdigit() and
          len(fields[3]) == 64)
    if not ok:
        raise ValueError(
            f"Pipeline.deserialize: the header of the serialized pipeline is damaged or cut "
            f"short ({data[:min(len(data), 100) if end < 0 else end]!r}); expected "
            f"'stoker.pipeline <version> <size> <sha256>' and a newline; {_FOREIGN_HINT}.")
    version, size = int(fields[1]), int(fields[2])
    if version > VERSION or version < 1:
        raise ValueError(
            f"Pipeline.deserialize: the pipeline was serialized in format version {version}, "
            f"and this stoker reads versions 1 to {VERSION}. Load it with the stoker that "
            f"wrote it (a newer one), or serialize the pipeline again with this one.")
    body = data[end + 1:]
    if len(body) != size:
        what = "truncated" if len(body) < size else "longer than its header says"
        raise ValueError(
            f"Pipeline.deserialize: the serialized pipeline is {what}: its header announces "
            f"{size} bytes after it, there are {len(body)}. Pass the whole of what "
            "Pipeline.serialize() returned (a file may have been cut short while copying).")
    if hashlib.sha256(body).hexdigest().encode("ascii") != fields[3]:
        raise ValueError(
            "Pipeline.deserialize: the serialized pipeline is damaged or was edited: its body "
            "does not match the checksum in its header. Pass the bytes Pipeline.serialize() "
            "returned, unchanged.")
    try:
        doc = json.loads(body.decode("ascii"))
        _check_shape(doc)
    except (ValueError, TypeError, KeyError, IndexError, UnicodeDecodeError) as e:
        raise ValueError(f"Pipeline.deserialize: the serialized pipeline's contents are not "
                         f"what stoker writes ({e}); {_FOREIGN_HINT}.") from None
    return doc


def _check_shape(doc):
    """Raises on a body whose fields are missing or of the wrong kind (the checksum matched,
    so only a hand-made file gets here)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("pipeline"), dict):
        raise ValueError("no 'pipeline' parameters")
    ops, outs = doc.get("operators"), doc.get("outputs")
    if not isinstance(ops, list) or not isinstance(outs, list) or not outs:
        raise ValueError("no 'operators' or no 'outputs'")

    def check_ref(r, k):
        if not (isinstance(r, list) and len(r) == 2 and all(type(x) is int for x in r) and
                0 <= r[0] < k and 0 <= r[1] < ops[r[0]]["num_outputs"]):
            raise ValueError(f"bad node reference {r!r}")

    for k, op in enumerate(ops):
        if not (isinstance(op, dict) and isinstance(op.get("op"), str) and
                op.get("device") in ("cpu", "gpu", "mixed") and
                type(op.get("num_outputs")) is int and op["num_outputs"] >= 1 and
                isinstance(op.get("args"), dict) and isinstance(op.get("tensor_args"), dict) and
                isinstance(op.get("inputs"), list)):
            raise ValueError(f"operator {k} is malformed")
        for r in list(op["inputs"]) + list(op["tensor_args"].values()):
            check_ref(r, k)  # inputs come before the operator: the graph stays acyclic
    for r in outs:
        check_ref(r, len(ops))


def pipeline_params(doc):
    """Pipeline.__init__ keywords from the serialized parameters."""
    p = doc["pipeline"]
    params = {k: p[k] for k in PARAMS if k in p}
    if "output_dtype" in params:
        params["output_dtype"] = _decode_dtypes(params["output_dtype"])
    return params


def restore_graph(pipe, doc):
    """Adds the serialized operators to the (new, empty) pipeline `pipe` and sets its outputs."""
    from ._schema import SCHEMAS
    from .pipeline import _OpRecord
    nodes = []
    for op in doc["operators"]:
        name = op["op"]
        where = f"fn.{name}" + (f" (defined at {op['location']})" if op.get("location") else "")
        schema = SCHEMAS.get(name)
        if schema is None:
            raise ValueError(
                f"Pipeline.deserialize: the pipeline uses the operator fn.{name}"
                f"{' (defined at ' + op['location'] + ')' if op.get('location') else ''}, which "
                "this stoker does not have. It may come from a plugin library that is not "
                "loaded in this process (load it before deserializing) or from a newer stoker.")
        if op["device"] not in schema["backends"]:
            raise ValueError(
                f"Pipeline.deserialize: {where} was serialized to run on '{op['device']}', "
                f"which this build of stoker does not have for it (it runs on: "
                f"{', '.join(schema['backends'])}). Load the pipeline where stoker was built "
                "with that backend (a GPU build for 'gpu' and 'mixed').")
        types = {a["name"]: a for a in schema["args"]}
        args = {}
        for k, v in op["args"].items():
            if k not in types or k in _PROCESS_IDS:
                raise ValueError(
                    f"Pipeline.deserialize: {where} has the argument '{k}', which this "
                    f"stoker's fn.{name} does not take (a pipeline from another version of "
                    f"stoker?). Its arguments are: {', '.join(sorted(types))}.")
            try:
                args[k] = _C.check_arg(name, k, decode_arg(types[k]["type"], v))
            except (TypeError, ValueError) as e:
                raise ValueError(f"Pipeline.deserialize: {where}: argument '{k}' = {v!r} is not "
                                 f"accepted by this stoker: {e}") from None
        for k in op["tensor_args"]:
            if k not in types or not types[k]["tensor"]:
                raise ValueError(
                    f"Pipeline.deserialize: {where} takes the argument '{k}' from another "
                    f"operator, which this stoker's fn.{name} does not accept.")
        n_in = len(op["inputs"])
        if not schema["min_inputs"] <= n_in <= schema["max_inputs"]:
            raise ValueError(f"Pipeline.deserialize: {where} has {n_in} input(s); this "
                             f"stoker's takes {schema['min_inputs']} to {schema['max_inputs']}.")
        node = lambda r: nodes[r[0]][r[1]]  # noqa: E731
        rec = _OpRecord(name, op["device"], args,
                        {k: node(r) for k, r in op["tensor_args"].items()},
                        [node(r) for r in op["inputs"]], op["num_outputs"], op.get("name"),
                        bool(op.get("preserve", False)))
        rec.location = op.get("location") or ""
        if name == "external_source":
            _external_source(pipe, rec, op.get("external_source") or {})
        if name in _PY_FUNCTIONS:
            raise ValueError(f"Pipeline.deserialize: {where} runs a Python function, which a "
                             "serialized pipeline cannot hold.")
        nodes.append(pipe._add_op(rec))
        if name == "external_source":
            pipe._external_sources[-1].record = weakref.ref(rec)
    pipe.set_outputs(*[nodes[i][k] for i, k in doc["outputs"]])


def _external_source(pipe, rec, extra):
    """The Python side of a deserialized external_source: fed with feed_input(name, data)."""
    from .external_source import _ExternalSource
    a = rec.args
    where = f"fn.external_source ({rec.location})" if rec.location else "fn.external_source"
    dtypes = a.get("dtype")
    layouts = a.get("layout")
    ndims = a.get("ndim")
    if layouts is not None and ndims is None:
        ndims = [len(l) if l else None for l in layouts]
    es = _ExternalSource(where, None, None, a.get("batch", True), a.get("batch_info", False),
                         "no", None if dtypes is None else
                         [_types.to_numpy_dtype(_types.DALIDataType(d)) for d in dtypes],
                         ndims, a.get("repeat_last", False), rec.name, False,
                         a.get("prefetch_queue_depth", 1))
    es.timeout = extra.get("timeout")
    es.gpu = bool(extra.get("gpu", False))
    es.layouts = layouts
    es.no_copy = bool(a.get("no_copy", False))
    rec.args = dict(a, _source_id=es.state.id)
    pipe._external_sources.append(es)
