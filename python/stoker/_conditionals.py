"""``if``, ``and``, ``or`` and ``not`` on DataNodes: ``@pipeline_def(enable_conditionals=True)``.

    @pipeline_def(enable_conditionals=True)
    def pipe():
        images = fn.decoders.image(jpegs)
        if fn.random.coin_flip(probability=0.25, dtype=types.BOOL):
            images = fn.rotate(images, angle=fn.random.uniform(range=(10, 30)))
        return images

As DALI does, the pipeline function is rewritten (its syntax tree, here) before it runs: each
``if`` becomes a call to ``if_stmt`` with its branches as functions, ``a and b`` / ``a or b``
calls with lazy operands, ``not a`` a call, and every call a ``call`` that rewrites the user's
helper functions in turn. With a Python condition, ``if_stmt`` just runs the branch Python would
run. With a DataNode (one scalar per sample) it runs both branches while the graph is defined:
every DataNode a branch uses that was made outside it goes through ``_conditional.split``
(the samples whose condition holds, or the others), and every variable that is assigned in
the ``if`` and used after it goes through ``_conditional.merge`` (the parts back in the
original order). The graph then runs each branch's operators on its part of the batch only.
An operator without inputs (``fn.random.coin_flip()``, a reader) made in a branch runs on the
whole batch and is split like any outside DataNode, so that each sample draws what it would
draw outside the ``if``; random operators with inputs in a branch draw by each sample's
position in the whole batch (the executor carries it), so results do not depend on the split.

The rules are DALI's: a variable used after such an ``if`` must be assigned in both branches
(or before the ``if``), with the same structure (tuples of the same length, dicts with the same
keys) and DataNodes of the same type, number of dimensions and layout; Python numbers there
become constants; a ``return`` in one branch needs one in the other. Conditions and the
operands of ``and`` / ``or`` are scalars per sample (``and`` / ``or`` booleans). ``while``
loops and conditional expressions (``a if c else b``) do not take DataNode conditions.
"""
import ast
import inspect
import os
import sys
import sysconfig
import textwrap
import types as _pytypes

__all__ = ["do_not_convert"]

_PREFIX = "_stk_"          # names the rewriting introduces
_AG = "_stk_ag"            # the name this module has inside rewritten code
_RETVAL = "_stk_retval"
_HERE = os.path.dirname(os.path.abspath(__file__))


def _data_node(x):
    from .pipeline import DataNode
    return isinstance(x, DataNode)


def _where():
    from .pipeline import _user_location
    return _user_location()


# ---------------------------------------------------------------- the trace: scopes and splits

class Undefined:
    """The value of a variable not assigned (yet) when an ``if`` on a DataNode is traced."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<unassigned variable {self.name!r}>"


def _key(node):
    return (node.op, node.output)


class _Scope:
    """One branch level: the predicate that split the batch, the branch being traced, the
    DataNodes made in each branch and the splits of outer DataNodes made for it."""

    def __init__(self, predicate, line):
        self.predicate = predicate
        self.line = line
        self.branch = None  # True, False, or None (outside both: the merge)
        self.made = {True: set(), False: set(), None: set()}
        self.splits = {}    # key of an outer node -> (its true part, its false part)

    def visible(self):
        if self.branch is None:
            return self.made[None] | self.made[True] | self.made[False]
        return self.made[self.branch]

    def has(self, key):
        return key in self.visible() or key in self.splits

    def get(self, node):
        if _key(node) in self.visible():
            return node
        return self.splits[_key(node)][0 if self.branch else 1]


class ConditionStack:
    """The scopes of the ``if`` statements being traced in one pipeline (bottom: the pipeline
    function itself)."""

    def __init__(self):
        self._stack = [_Scope(None, "")]
        self._internal = 0
        self._in_branches = {}  # key of a DataNode made in a branch -> the `if` (file:line)

    # ---- hooks of record_op (every fn.* call of the pipeline)
    def enter_op(self, op_name, inputs, tensor_args):
        """The inputs and argument inputs of an operator made in the current scope: those made
        outside it, split down to it."""
        if self._internal:
            return inputs, tensor_args
        if op_name == "batch_permutation" and len(self._stack) > 1:
            # A permutation of the samples in this branch: it takes their number from the
            # branch's part of the predicate (split down to here like any input).
            tensor_args = dict(tensor_args, _batch_like=self._stack[-1].predicate)
        where = f"fn.{op_name}"
        return ([self.lookup(x, where) for x in inputs],
                {k: self.lookup(v, f"{where} (argument '{k}')") for k, v in tensor_args.items()})

    def made(self, outputs, has_inputs):
        """Outputs of an operator: operators without inputs run on the whole batch (they belong
        to the pipeline's scope and are split where used), the others on their inputs' part."""
        if self._internal:
            return
        self._register(outputs, self._stack[0] if not has_inputs else self._stack[-1])

    def _register(self, nodes, scope):
        for n in nodes:
            scope.made[scope.branch].add(_key(n))
            if scope is not self._stack[0]:
                self._in_branches[_key(n)] = scope.line

    # ---- lookups
    def lookup(self, node, where):
        """`node` as seen from the current scope: split by every predicate between the scope
        it was made in and this one."""
        key = _key(node)
        level = next((k for k in range(len(self._stack) - 1, -1, -1) if self._stack[k].has(key)),
                     None)
        if level is None:
            if key in self._in_branches:
                raise ValueError(
                    f"{where} ({_where()}): a DataNode made inside a branch of the `if` at "
                    f"{self._in_branches[key]} is used outside that branch. Only variables "
                    "assigned in both branches (merged after the `if`) can be used after it; "
                    "assign the value to a variable in both branches.")
            # Made outside the traced function (an argument of the pipeline function, an
            # operator made outside any pipeline): it belongs to the pipeline's scope.
            self._stack[0].made[None].add(key)
            level = 0
        if level == len(self._stack) - 1:
            return self._stack[-1].get(node)
        current = self._stack[level].get(node)
        for scope in self._stack[level + 1:]:
            t, f = self._internal_op("_conditional.split", [current],
                                     predicate=scope.predicate, _if_stmt=True)
            scope.splits[key] = scope.splits[_key(current)] = (t, f)
            scope.made[True].add(_key(t))
            scope.made[False].add(_key(f))
            self._in_branches[_key(t)] = self._in_branches[_key(f)] = scope.line
            current = t if scope.branch else f
        return current

    def check_outputs(self, outputs):
        """The pipeline's outputs: none made inside a branch (that would be part of a batch)."""
        for i, o in enumerate(outputs):
            if _data_node(o):
                self.lookup(o, f"Pipeline output {i}")

    def _internal_op(self, name, inputs, **kwargs):
        from ._schema import record_op
        self._internal += 1
        try:
            return record_op(name, inputs, kwargs)
        finally:
            self._internal -= 1

    # ---- scopes
    def push(self, predicate, line):
        pred = self.lookup(predicate, f"the condition of the `if` at {line}")
        self._stack.append(_Scope(pred, line))
        return pred

    def pop(self):
        self._stack.pop()

    def top(self):
        return self._stack[-1]

    def merge(self, true_value, false_value, predicate, name):
        out = self._internal_op("_conditional.merge", [true_value, false_value],
                                predicate=predicate, _name=name)
        return out


def _stack():
    from .pipeline import Pipeline
    pipe = Pipeline.current()
    return getattr(pipe, "_condition_stack", None) if pipe is not None else None


def _no_conditionals(what):
    return TypeError(f"{what} ({_where()}): a DataNode has no truth value unless the pipeline is "
                     "defined with @pipeline_def(enable_conditionals=True), which runs `if`, "
                     "`and`, `or` and `not` on DataNodes per sample.")


# ---------------------------------------------------------------- what the rewritten code calls

def ld(thunk, name):
    """A variable's value, or Undefined where it is not assigned."""
    try:
        return thunk()
    except NameError:
        return Undefined(name)


def is_undefined(v):
    return isinstance(v, Undefined)


def ret(thunk):
    """The value an `if` returned, None where a branch fell off the end of the function."""
    try:
        v = thunk()
    except NameError:
        return None
    return None if isinstance(v, Undefined) else v


def py_test(value, what):
    """The condition of a statement that takes only Python values (`while`, `a if c else b`,
    an `if` whose branches return or break from the middle)."""
    if _data_node(value):
        raise TypeError(f"{what} ({_where()}) cannot take a DataNode condition: stoker (as DALI) "
                        "runs per-sample conditions in `if` statements and in `and`, `or` and "
                        "`not` only. Write it as an `if` statement that assigns a variable in both "
                        "branches.")
    return value


def _flatten(x):
    """(structure, leaves) of a variable's value: tuples, lists and dicts are structure."""
    if isinstance(x, (tuple, list)):
        subs = [_flatten(v) for v in x]
        return ((type(x), tuple(s for s, _ in subs)), [l for _, ls in subs for l in ls])
    if isinstance(x, dict):
        keys = list(x)
        subs = [_flatten(x[k]) for k in keys]
        return ((dict, tuple(keys), tuple(s for s, _ in subs)), [l for _, ls in subs for l in ls])
    return ("*", [x])


def _unflatten(struct, leaves):
    it = iter(leaves)

    def build(s):
        if s == "*":
            return next(it)
        if s[0] is dict:
            return {k: build(sub) for k, sub in zip(s[1], s[2])}
        items = [build(sub) for sub in s[1]]
        t = s[0]
        if t is list:
            return items
        if t is tuple:
            return tuple(items)
        return t(*items) if hasattr(t, "_fields") else t(items)
    return build(struct)


def _describe(struct):
    if struct == "*":
        return "a value"
    if struct[0] is dict:
        return f"a dict with keys {list(struct[1])}"
    return f"a {struct[0].__name__} of {len(struct[1])} values"


def _leaf_names(name, struct):
    if struct == "*":
        return [name]
    if struct[0] is dict:
        return [n for k, s in zip(struct[1], struct[2]) for n in _leaf_names(f"{name}[{k!r}]", s)]
    return [n for i, s in enumerate(struct[1]) for n in _leaf_names(f"{name}[{i}]", s)]


def _variable(name):
    return "the return value" if name.startswith(_RETVAL) else f"variable '{name}'"


def _branch_value(stack, value, name, branch, line):
    """A branch's value of an output variable, as DataNodes of that branch: numbers become
    constants (as in DALI), DataNodes made outside the branch are split."""
    from . import types as _types
    if _data_node(value):
        return stack.lookup(value, f"`if` at {line}")
    try:
        node = _types.Constant(value, device="cpu")
    except Exception:  # noqa: BLE001 (not a number: the message below says what it is)
        node = None
    if not _data_node(node):
        raise TypeError(
            f"`if` at {line}: {_variable(name)} is merged after this `if` on a DataNode, but the "
            f"`{branch}` branch gives it {type(value).__name__} {value!r}, which is neither a "
            "DataNode nor a number that can become a constant. Give it a DataNode (or a "
            "number) in both branches.")
    stack.made([node], has_inputs=False)
    return stack.lookup(node, f"`if` at {line}")


def if_stmt(cond, body, orelse, get_state, set_state, names, nouts):
    """An `if` statement: `names` are the variables either branch assigns, the first `nouts`
    of them used after the `if` (the others get back their value from before it)."""
    if not _data_node(cond):
        if cond:
            body()
        else:
            orelse()
        return
    stack = _stack()
    line = _where()
    if stack is None:
        raise _no_conditionals("`if`")
    init = get_state()
    results = {}
    pred = stack.push(cond, line)
    try:
        for branch, run in ((True, body), (False, orelse)):
            set_state(init)
            stack.top().branch = branch
            run()
            state = get_state()
            label = "if" if branch else "else"
            for name, v in zip(names[:nouts], state[:nouts]):
                if isinstance(v, Undefined):
                    if name.startswith(_RETVAL):
                        raise ValueError(
                            f"`if` at {line}: one branch of this `if` on a DataNode returns and "
                            f"the `{label}` branch does not; with a per-sample condition both "
                            "branches must return a value (or neither).")
                    raise ValueError(
                        f"`if` at {line}: variable '{name}' is used after this `if` on a "
                        f"DataNode but is not assigned in its `{label}` branch (nor before the "
                        f"`if`). Every variable used after it is merged from both branches: "
                        f"assign '{name}' in the `{label}` branch too, or before the `if`.")
            results[branch] = [_flatten(v) for v in state[:nouts]]
            results[branch] = [(s, [_branch_value(stack, l, n, label, line)
                                    for l, n in zip(leaves, _leaf_names(name, s))])
                               for name, (s, leaves) in zip(names, results[branch])]
        stack.top().branch = None
        merged = []
        for name, (s_t, l_t), (s_f, l_f) in zip(names, results[True], results[False]):
            if s_t != s_f:
                raise ValueError(
                    f"`if` at {line}: {_variable(name)} is {_describe(s_t)} in the `if` branch "
                    f"and {_describe(s_f)} in the `else` branch. Values merged after an `if` on "
                    "a DataNode must have the same structure in both branches (tuples and lists "
                    "of the same length, dicts with the same keys); their contents may differ.")
            leaves = [stack.merge(t, f, pred, "the return value" if name.startswith(_RETVAL)
                                  else f"variable '{leaf_name}'")
                      for t, f, leaf_name in zip(l_t, l_f, _leaf_names(name, s_t))]
            merged.append((s_t, leaves))
    finally:
        stack.pop()
    values = []
    for s, leaves in merged:
        stack.made(leaves, has_inputs=True)
        values.append(_unflatten(s, leaves))
    set_state(tuple(values) + tuple(init[nouts:]))


def _logical(stack, value, name, side):
    from . import types as _types
    if not _data_node(value):
        try:
            node = _types.Constant(value, device="cpu")
        except Exception:  # noqa: BLE001 (not a number: the message below says what it is)
            node = None
        if not _data_node(node):
            raise TypeError(f"`{name}` ({_where()}): its {side} operand must be a DataNode or a "
                            f"boolean, got {type(value).__name__} {value!r}")
        value = node
        stack.made([value], has_inputs=False)
    from ._schema import record_op
    return record_op("_conditional.validate_logical", [value],
                     {"expression_name": name, "expression_side": side})


def _lazy(name, a, b_thunk):
    stack = _stack()
    if stack is None:
        raise _no_conditionals(f"`{name}`")
    line = _where()
    a = _logical(stack, a, name, "left")
    pred = stack.push(a, line)
    try:
        parts = {}
        for branch in (True, False):
            stack.top().branch = branch
            if branch == (name == "and"):
                parts[branch] = stack.lookup(_logical(stack, b_thunk(), name, "right"), f"`{name}`")
            else:
                parts[branch] = stack.lookup(pred, f"`{name}`")
        stack.top().branch = None
        merged = stack.merge(parts[True], parts[False], pred, f"the result of `{name}`")
    finally:
        stack.pop()
    stack.made([merged], has_inputs=True)
    return merged


def and_(a_thunk, b_thunk):
    """`a and b`: for a DataNode `a`, `b` is computed only for the samples where `a` holds."""
    a = a_thunk()
    if _data_node(a):
        return _lazy("and", a, b_thunk)
    return b_thunk() if a else a


def or_(a_thunk, b_thunk):
    """`a or b`: for a DataNode `a`, `b` is computed only for the samples where `a` fails."""
    a = a_thunk()
    if _data_node(a):
        return _lazy("or", a, b_thunk)
    return a if a else b_thunk()


def not_(a):
    if _data_node(a):
        if _stack() is None:
            raise _no_conditionals("`not`")
        from ._schema import record_op
        return record_op("_conditional.not_", [a], {})
    return not a


# ---------------------------------------------------------------- rewriting functions

def do_not_convert(func=None):
    """Keeps a function (and the functions defined in it) from being rewritten for
    conditionals, as DALI's ``do_not_convert``: for code that does not use DataNodes (a source
    factory whose functions must stay picklable, say)."""
    if func is None:
        return do_not_convert
    if getattr(func, "_is_pipeline_def", False):
        raise ValueError("Pipeline definition cannot be marked with @do_not_convert.")
    func.__stoker_do_not_convert__ = True
    return func


def converted(func):
    """Marks a function defined in rewritten code (it is rewritten already)."""
    try:
        func.__stoker_converted__ = True
    except AttributeError:
        pass
    return func


def _library_dirs():
    dirs = {_HERE}
    for k in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(k)
        if p:
            dirs.add(os.path.abspath(p))
    dirs.add(os.path.abspath(os.path.dirname(os.__file__)))
    return tuple(d + os.sep for d in dirs)


_LIBRARY_DIRS = None
_CACHE = {}  # code object -> rewritten code object (or None: not rewritable)


def _user_function(f):
    global _LIBRARY_DIRS
    if not isinstance(f, _pytypes.FunctionType) or f.__name__ == "<lambda>":
        return False
    if getattr(f, "__stoker_converted__", False) or getattr(f, "__stoker_do_not_convert__", False):
        return False
    code = f.__code__
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        return False
    if _LIBRARY_DIRS is None:
        _LIBRARY_DIRS = _library_dirs()
    path = os.path.abspath(code.co_filename)
    return not path.startswith(_LIBRARY_DIRS) and not code.co_filename.startswith("<")


def call(f, *args, **kwargs):
    """A call in rewritten code: the user's own functions are rewritten too (once each)."""
    if isinstance(f, _pytypes.MethodType) and _user_function(f.__func__):
        g = convert(f.__func__, required=False)
        if g is not None:
            return _pytypes.MethodType(g, f.__self__)(*args, **kwargs)
    elif _user_function(f):
        g = convert(f, required=False)
        if g is not None:
            return g(*args, **kwargs)
    return f(*args, **kwargs)


def convert(f, required=True):
    """The function `f` rewritten for conditionals (None, or with required=True an error,
    where its source is not available)."""
    code = f.__code__
    if code not in _CACHE:
        try:
            _CACHE[code] = _rewrite(f)
        except (OSError, TypeError, SyntaxError, _CannotConvert) as e:
            _CACHE[code] = e
    new = _CACHE[code]
    if isinstance(new, Exception):
        if required:
            raise ValueError(
                f"@pipeline_def(enable_conditionals=True): cannot rewrite {f.__qualname__} "
                f"({_describe_code(code)}): {new}. enable_conditionals reads the function's "
                "source; define it with `def` in a file.") from None
        return None
    cells = dict(zip(code.co_freevars, f.__closure__ or ()))
    cells[_AG] = _pytypes.CellType(sys.modules[__name__])
    closure = tuple(cells[n] for n in new.co_freevars)
    g = _pytypes.FunctionType(new, f.__globals__, f.__name__, f.__defaults__, closure)
    g.__kwdefaults__ = f.__kwdefaults__
    g.__dict__.update(f.__dict__)
    for attr in ("__qualname__", "__doc__", "__module__", "__annotations__"):
        try:
            setattr(g, attr, getattr(f, attr))
        except (AttributeError, TypeError):
            pass
    g.__wrapped__ = f
    g.__stoker_converted__ = True
    return g


def _describe_code(code):
    return f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"


class _CannotConvert(Exception):
    pass


def _rewrite(f):
    """The code object of `f` with its `if`s, boolean operators and calls rewritten."""
    lines, first = inspect.getsourcelines(f)
    source = "".join(lines)
    dedented = textwrap.dedent(source)
    indent = len(lines[0]) - len(lines[0].lstrip())
    tree = ast.parse(dedented)
    fdef = tree.body[0] if tree.body else None
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)) or fdef.name != f.__name__:
        raise _CannotConvert("its source is not a plain `def`")
    for node in ast.walk(tree):
        if hasattr(node, "lineno"):
            node.lineno += first - 1
            node.end_lineno = (node.end_lineno or node.lineno) + first - 1
            node.col_offset += indent
            if node.end_col_offset is not None:
                node.end_col_offset += indent
    fdef.decorator_list = []
    fdef = _Rewriter().function(fdef)
    freevars = [n for n in f.__code__.co_freevars] + [_AG]
    factory = ast.FunctionDef(
        name=_PREFIX + "factory",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in freevars], vararg=None,
                           kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[fdef, ast.Return(value=ast.Name(id=fdef.name, ctx=ast.Load()))],
        decorator_list=[], returns=None, type_comment=None)
    ast.copy_location(factory, fdef)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    compiled = compile(module, f.__code__.co_filename, "exec", dont_inherit=True)
    factory_code = next(c for c in compiled.co_consts if isinstance(c, _pytypes.CodeType))
    return next(c for c in factory_code.co_consts
                if isinstance(c, _pytypes.CodeType) and c.co_name == f.__name__)


# ---- analysis of names

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _walk_scope(nodes):
    """The nodes of statements, not descending into nested scopes (their headers included:
    decorators, defaults, a class's bases, a comprehension's first iterable)."""
    todo = list(nodes)
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            todo.extend(node.decorator_list)
            todo.extend(node.args.defaults)
            todo.extend(d for d in node.args.kw_defaults if d is not None)
        elif isinstance(node, ast.Lambda):
            todo.extend(node.args.defaults)
            todo.extend(d for d in node.args.kw_defaults if d is not None)
        elif isinstance(node, ast.ClassDef):
            todo.extend(node.decorator_list)
            todo.extend(node.bases)
            todo.extend(node.keywords)
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            todo.append(node.generators[0].iter)
        else:
            todo.extend(ast.iter_child_nodes(node))


def _assigned(stmts):
    """Names the statements bind in their scope, in order of appearance."""
    names = []

    def add(n):
        if n not in names:
            names.append(n)
    for node in sorted(_walk_scope(stmts), key=lambda n: (getattr(n, "lineno", 0),
                                                           getattr(n, "col_offset", 0))):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                add((a.asname or a.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            add(node.rest)
    return names


def _loads(nodes):
    """Names read by the nodes, nested scopes included (what a closure reads counts)."""
    return {n.id for node in nodes for n in ast.walk(node)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


class _Liveness:
    """Which variables are read after each `if` before being assigned again (an
    over-approximation inside loops, `try` and `with`)."""

    def __init__(self):
        self.after = {}  # id(If node) -> names live after it

    def block(self, stmts, live):
        for s in reversed(stmts):
            live = self.stmt(s, live)
        return live

    def stmt(self, s, live):
        if isinstance(s, ast.If):
            self.after[id(s)] = set(live)
            return _loads([s.test]) | self.block(s.body, live) | self.block(s.orelse, live)
        if isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
            inside = live | _loads([s])
            self.block(s.body, inside)
            self.block(s.orelse, live)
            return inside
        if isinstance(s, (ast.With, ast.AsyncWith)):
            inner = self.block(s.body, live)
            return inner | _loads(s.items)
        if isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
            everything = live | _loads([s])
            for b in (s.body, s.orelse, s.finalbody):
                self.block(b, everything)
            for h in s.handlers:
                self.block(h.body, everything)
            return everything
        if isinstance(s, ast.Match):
            r = set(_loads([s.subject]))
            for c in s.cases:
                r |= self.block(c.body, live) | _loads([c.pattern]) | _loads([c.guard] if c.guard else [])
            return r | live
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return (live - {s.name}) | _loads([s])
        if isinstance(s, ast.Return):
            return _loads([s]) if s.value is not None else set()
        if isinstance(s, (ast.Break, ast.Continue, ast.Raise)):
            return live | _loads([s])
        kills = set()
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            kills = {t.id for t in targets if isinstance(t, ast.Name)}
            for t in targets:
                if isinstance(t, (ast.Tuple, ast.List)):
                    kills |= {e.id for e in t.elts if isinstance(e, ast.Name)}
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            kills = set(_assigned([s]))
        return (live - kills) | _loads([s])


def _always_returns(stmts):
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and _always_returns(last.body) and _always_returns(last.orelse)


def _lift_returns(stmts):
    """An `if` one of whose branches returns takes the statements after it into its other
    branch (the same program), so that returns end branches and the `if` can be traced."""
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, ast.If):
            s.body = _lift_returns(s.body)
            s.orelse = _lift_returns(s.orelse)
            rest = stmts[i + 1:]
            body_returns, else_returns = _always_returns(s.body), _always_returns(s.orelse)
            if rest and body_returns != else_returns:
                if body_returns:
                    s.orelse = _lift_returns(s.orelse + rest)
                else:
                    s.body = _lift_returns(s.body + rest)
                out.append(s)
                return out
            if rest and body_returns and else_returns:
                out.append(s)
                return out
        out.append(s)
    return out


def _escapes(stmts):
    """Why a branch cannot become a function (None when it can): a `break`, `continue`,
    `yield` or `await` that leaves it, a `return` before its end, a global/nonlocal
    declaration."""
    for k, s in enumerate(stmts):
        tail = k == len(stmts) - 1
        for node in _walk_scope([s]):
            if isinstance(node, ast.Return) and not (tail and node is s):
                return "a `return` before the end of a branch"
            if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
                return "`yield` or `await`"
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                return "a `global` or `nonlocal` declaration"
        for node in _walk_loops_out([s]):
            if isinstance(node, (ast.Break, ast.Continue)):
                return "`break` or `continue`"
    return None


def _walk_loops_out(nodes):
    """Nodes outside nested loops and scopes (a break there leaves the branch)."""
    todo = list(nodes)
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            todo.extend(node.orelse)
            continue
        if isinstance(node, _SCOPES):
            continue
        todo.extend(ast.iter_child_nodes(node))


def _name(id_, store=False):
    return ast.Name(id=id_, ctx=ast.Store() if store else ast.Load())


def _ag(attr):
    return ast.Attribute(value=_name(_AG), attr=attr, ctx=ast.Load())


def _one_line(node):
    """A location: the first line of `node`."""
    at = ast.Pass()
    at.lineno = at.end_lineno = node.lineno
    at.col_offset = at.end_col_offset = node.col_offset
    return at


def _located(new, like):
    """`new` (and its children) at the end of `like`."""
    for n in ast.walk(new):
        n.lineno = n.end_lineno = like.end_lineno
        n.col_offset = n.end_col_offset = like.end_col_offset
    return new


def _lambda(body):
    return ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                                         kw_defaults=[], kwarg=None, defaults=[]), body=body)


def _def(name, body, args=()):
    return ast.FunctionDef(
        name=name, args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=a) for a in args],
                                      vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                                      defaults=[]),
        body=body or [ast.Pass()], decorator_list=[], returns=None, type_comment=None)


_FRAME_BUILTINS = {"super", "locals", "globals", "vars", "eval", "exec", "dir", "breakpoint"}


class _Rewriter(ast.NodeTransformer):
    """Rewrites one function (and the functions and lambdas defined in it)."""

    def __init__(self):
        self.count = 0
        self.frames = []  # per function being rewritten: (liveness, names declared global)
        self.selves = []  # per function: the name of its `self` when it is a method, else None

    def function(self, fdef):
        fdef.body = _lift_returns(fdef.body)
        liveness = _Liveness()
        liveness.block(fdef.body, set())
        globals_ = {n for node in _walk_scope(fdef.body) if isinstance(node, ast.Global)
                    for n in node.names}
        self.frames.append((liveness, globals_))
        try:
            # Annotations would be evaluated where the rewritten function is made, without the
            # names a `from __future__ import annotations` module leaves unresolved.
            a = fdef.args
            for arg in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
                if arg is not None:
                    arg.annotation = None
            fdef.args = self.visit(fdef.args)
            fdef.returns = None
            fdef.body = self.statements(fdef.body)
        finally:
            self.frames.pop()
        return fdef

    def statements(self, stmts):
        out = []
        for s in stmts:
            r = self.visit(s)
            out.extend(r if isinstance(r, list) else [r])
        return out

    # ---- scopes
    def visit_FunctionDef(self, node, method=False):
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.decorator_list.append(_ag("converted"))  # applied first: rewritten already
        a = node.args
        self.selves.append((a.posonlyargs + a.args)[0].arg if method and (a.posonlyargs + a.args)
                           else None)
        try:
            return self.function(node)
        finally:
            self.selves.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        # A class body is not a function: its `if`s and boolean operators stay as they are
        # (names of a class body are not visible to the functions the rewriting makes); its
        # methods are rewritten.
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.bases = [self.visit(b) for b in node.bases]
        body = []
        for s in node.body:
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body.append(self.visit_FunctionDef(s, method=True))
            else:
                body.append(s)
        node.body = body
        return node

    # ---- statements
    def visit_If(self, node):
        liveness, globals_ = self.frames[-1]
        live_after = liveness.after.get(id(node), set())
        node.test = self.visit(node.test)
        body = self.statements(node.body)
        orelse = self.statements(node.orelse)
        why = _escapes(body) or _escapes(orelse)
        if why is not None:
            node.test = self._call("py_test", [node.test, ast.Constant(
                f"an `if` with {why} in its branches")], at=node)
            node.body, node.orelse = body, orelse
            return node
        self.count += 1
        n = self.count
        retval = f"{_RETVAL}_{n}"
        returns = False
        for branch in (body, orelse):
            if branch and isinstance(branch[-1], ast.Return):
                r = branch[-1]
                value = r.value if r.value is not None else ast.Constant(None)
                branch[-1] = ast.copy_location(ast.Assign(targets=[_name(retval, True)],
                                                          value=value), r)
                returns = True
        names = [v for v in _assigned(body + orelse) if not v.startswith(_PREFIX)]
        if returns:
            names.append(retval)
        outputs = [v for v in names if v in live_after or v == retval]
        names = outputs + [v for v in names if v not in outputs]
        local = [v for v in names if v not in globals_]
        glob = [v for v in names if v in globals_]

        def declare():
            d = []
            if local:
                d.append(ast.Nonlocal(names=list(local)))
            if glob:
                d.append(ast.Global(names=list(glob)))
            return d
        out = []
        if local:
            # `nonlocal` needs the names bound in this function; this never runs.
            out.append(ast.If(test=ast.Constant(False), orelse=[], body=[ast.Assign(
                targets=[_name(v, True) for v in local], value=ast.Constant(None))]))
        t, f, g, s = (f"{_PREFIX}{w}_{n}" for w in ("if_true", "if_false", "get", "set"))
        out.append(_def(t, declare() + body))
        out.append(_def(f, declare() + orelse))
        out.append(_def(g, [ast.Return(value=ast.Tuple(elts=[
            self._call("ld", [_lambda(_name(v)), ast.Constant(v)]) for v in names],
            ctx=ast.Load()))]))
        setter = declare()
        for k, v in enumerate(names):
            setter.append(ast.Assign(targets=[_name(v, True)], value=ast.Subscript(
                value=_name(_PREFIX + "v"), slice=ast.Constant(k), ctx=ast.Load())))
            setter.append(ast.If(test=self._call("is_undefined", [_name(v)]),
                                 body=[ast.Delete(targets=[ast.Name(id=v, ctx=ast.Del())])],
                                 orelse=[]))
        out.append(_def(s, setter, args=[_PREFIX + "v"]))
        out.append(ast.Expr(value=self._call("if_stmt", [
            node.test, _name(t), _name(f), _name(g), _name(s),
            ast.Tuple(elts=[ast.Constant(v) for v in names], ctx=ast.Load()),
            ast.Constant(len(outputs))])))
        if returns:
            out.append(ast.Return(value=self._call("ret", [_lambda(_name(retval))])))
        # The code made here is on the `if`'s line (Python reports a call at the line where the
        # called attribute ends, and the first line names the `if` in messages).
        at = _one_line(node)
        for o in out:
            ast.copy_location(o, at)
            ast.fix_missing_locations(o)
        return out

    def visit_While(self, node):
        node.test = self._call("py_test", [self.visit(node.test),
                                           ast.Constant("the condition of a `while` loop")],
                               at=node)
        node.body = self.statements(node.body)
        node.orelse = self.statements(node.orelse)
        return node

    # ---- expressions
    def visit_IfExp(self, node):
        self.generic_visit(node)
        node.test = self._call("py_test", [node.test, ast.Constant(
            "a conditional expression (`a if c else b`)")], at=node)
        return node

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        if any(isinstance(n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await))
               for v in node.values for n in ast.walk(v)):
            return node
        fn = "and_" if isinstance(node.op, ast.And) else "or_"
        result = node.values[-1]
        for v in reversed(node.values[:-1]):
            result = self._call(fn, [_lambda(v), _lambda(result)], at=node)
        return ast.copy_location(result, node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(self._call("not_", [node.operand], at=node), node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if isinstance(node.func, ast.Name) and node.func.id in _FRAME_BUILTINS:
            if (node.func.id == "super" and not node.args and not node.keywords and self.selves
                    and self.selves[-1]):
                # A branch becomes a function of its own, where `super()` would find no
                # arguments: name the class and the instance.
                node.args = [_name("__class__"), _name(self.selves[-1])]
            return node
        node.args = [func] + node.args
        # The call keeps the line Python gives it (that of the end of `func`), which names it
        # in messages (_user_location).
        node.func = _located(_ag("call"), func)
        return node

    def _call(self, fn, args, at=None):
        func = _ag(fn) if at is None else _located(_ag(fn), _one_line(at))
        return ast.Call(func=func, args=args, keywords=[])
