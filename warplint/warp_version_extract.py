"""Read the facts warplint depends on out of a Warp release's Python sources (text only, never imported).

Used by ``scripts/build_warp_facts.py`` on each released wheel to generate ``warplint/warp_versions_data.py``,
and by the tests on small snippets shaped like each release. Every function takes source text and returns
plain data; a shape it does not recognise raises ``ExtractError`` (a table built from a misread is worse
than no table).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field


class ExtractError(Exception):
    """The source does not have the shape the extractor knows (a new Warp layout to teach it)."""


def config_version(config_source: str) -> str:
    """``version = "X.Y.Z"`` (annotated or not) at module level of ``warp/config.py``."""
    for name, value in _module_assignments(ast.parse(config_source)):
        if name == "version" and isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value.value
    raise ExtractError("no module-level `version = \"...\"` in config.py")


def config_names(config_source: str) -> frozenset[str]:
    """Every name ``warp/config.py`` binds at module level (assignments, annotated or not)."""
    names = frozenset(name for name, _ in _module_assignments(ast.parse(config_source)))
    if "version" not in names or "enable_backward" not in names:
        raise ExtractError("config.py binds neither `version` nor `enable_backward`: not Warp's config module")
    return names


def config_defaults(config_source: str) -> dict[str, object]:
    """The value each ``warp/config.py`` name has at import when that value is a literal (``max_unroll: int = 16``);
    a name computed at import (an environment read, an enum member) has no entry: its default is not one constant."""
    return {name: value.value for name, value in _module_assignments(ast.parse(config_source))
            if isinstance(value, ast.Constant)}


def array_extents(types_source: str) -> frozenset[str]:
    """The integer attributes ``class array`` documents (``size (int)``, ``shape (tuple[int])`` in its docstring's
    ``Attributes:`` section): counts and extents of the data an array holds, so a different number per array.
    Its type attributes (``dtype (DType)``) and flags (``pinned (bool)``) are not counts."""
    docstring = ast.get_docstring(_class(ast.parse(types_source), "array")) or ""
    section = docstring.partition("Attributes:")[2].partition("\n\n")[0]
    found = frozenset(name for name, kind in re.findall(r"^\s*(\w+) \(([^)]*)\):", section, re.MULTILINE)
                      if kind.replace(" ", "") in ("int", "tuple[int]", "tuple[int,...]"))
    if not found:
        raise ExtractError("class array documents no integer attribute under `Attributes:`")
    return found


@dataclass(frozen=True)
class ArrayTypes:
    """Warp's array types by the names ``warp.types`` gives them."""

    classes: frozenset[str]  # what ``is_array`` accepts (the ``array_types`` tuple) and the aliases that make one
    dtype_any: frozenset[str]  # those whose ``dtype`` is ``Any`` when not given (an annotation then is generic)


def array_types(types_source: str, *class_sources: str) -> ArrayTypes:
    """The ``array_types = (array, indexedarray, ...)`` tuple of ``types.py``, with the module-level aliases that
    return one of them (``array1d`` .. ``array4d``: a function before 1.12, a class whose ``__new__`` returns
    ``array(...)`` since). Each class's ``dtype`` default is read from its ``__init__``, in ``types.py`` or in
    ``class_sources`` (``fabricarray`` lives in ``fabric.py``); an alias has its target's."""
    tree = ast.parse(types_source)
    classes = _name_tuple(tree, "array_types")
    trees = [tree, *(ast.parse(source) for source in class_sources)]
    dtype_any = {name for name in classes if _dtype_default_is_any(_class_in(trees, name))}
    found = set(classes)
    for node in tree.body:
        target = _forwarded_to(node)
        if target in classes:
            found.add(node.name)  # type: ignore[attr-defined]  # a def or a class: both are named
            if target in dtype_any:
                dtype_any.add(node.name)  # type: ignore[attr-defined]
    return ArrayTypes(frozenset(found), frozenset(dtype_any))


def generic_types(types_source: str) -> frozenset[str]:
    """The ``generic_types = (Any, Scalar, Float, Int)`` tuple of ``types.py``: the annotations
    ``type_is_generic`` takes for generic as they are."""
    return frozenset(_name_tuple(ast.parse(types_source), "generic_types"))


def _name_tuple(tree: ast.Module, name: str) -> tuple[str, ...]:
    for target, value in _module_assignments(tree):
        if target == name and isinstance(value, ast.Tuple) and all(isinstance(e, ast.Name) for e in value.elts):
            return tuple(e.id for e in value.elts)  # type: ignore[attr-defined]  # checked just above
    raise ExtractError(f"no module-level `{name} = (...)` tuple of names")


def _class_in(trees: list[ast.Module], name: str) -> ast.ClassDef:
    for tree in trees:
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return node
    raise ExtractError(f"no class {name} in the sources read")


def _dtype_default_is_any(cls: ast.ClassDef) -> bool:
    default = _parameter_default(_method(cls, "__init__"), "dtype")
    if isinstance(default, ast.Name) and default.id == "Any":
        return True
    if isinstance(default, ast.Constant) and default.value is None:
        return False
    raise ExtractError(f"{cls.name}.__init__'s dtype default is neither Any nor None")


def _forwarded_to(node: ast.stmt) -> str | None:
    """``f`` when ``node`` is an alias of a call of ``f``: a module-level function (or a class's ``__new__``)
    taking ``*args, **kwargs`` and ending in ``return f(*args, **kwargs)`` (``array2d``: ``kwargs["ndim"] = 2``
    first). A function with parameters of its own (``from_ptr``) builds an array; it does not name a type."""
    if isinstance(node, ast.ClassDef):
        node = next((item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__new__"),
                    node)
    if not isinstance(node, ast.FunctionDef) or node.args.vararg is None or node.args.kwarg is None:
        return None
    last = node.body[-1]
    call = last.value if isinstance(last, ast.Return) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and len(call.args) == 1
            and len(call.keywords) == 1):
        return None
    star, double_star = call.args[0], call.keywords[0]
    if (isinstance(star, ast.Starred) and isinstance(star.value, ast.Name) and star.value.id == node.args.vararg.arg
            and double_star.arg is None and isinstance(double_star.value, ast.Name)
            and double_star.value.id == node.args.kwarg.arg):
        return call.func.id
    return None


def _module_assignments(tree: ast.Module) -> Iterable[tuple[str, ast.expr | None]]:
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    yield target.id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            yield node.target.id, node.value


@dataclass(frozen=True)
class ModuleOptionTable:
    """``self.options = {...}`` in ``Module.__init__``: the valid keys, which of them copy a ``wp.config``
    value when the module is created (key -> config name), and the constant defaults of the others."""

    keys: frozenset[str]
    snapshot: dict[str, str]
    constants: dict[str, object] = field(default_factory=dict)


def module_options(context_source: str) -> ModuleOptionTable:
    """The option table of ``class Module`` in ``warp/_src/context.py`` (``warp/context.py`` before the move)."""
    tree = ast.parse(context_source)
    init = _method(_class(tree, "Module"), "__init__")
    for node in ast.walk(init):
        if (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and _is_self_attr(node.targets[0], "options")
            and isinstance(node.value, ast.Dict)
        ):
            keys: set[str] = set()
            snapshot: dict[str, str] = {}
            constants: dict[str, object] = {}
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                    raise ExtractError("Module.options has a key that is not a string literal")
                keys.add(key.value)
                config_name = _config_read(value)
                if config_name is not None:
                    snapshot[key.value] = config_name
                elif isinstance(value, ast.Constant):
                    constants[key.value] = value.value
            return ModuleOptionTable(frozenset(keys), snapshot, constants)
    raise ExtractError("Module.__init__ assigns no `self.options = {...}` dict")


def _config_read(value: ast.expr) -> str | None:
    """``warp.config.X`` / ``warp._src.config.X`` / ``config.X`` -> ``X``."""
    if isinstance(value, ast.Attribute):
        owner = value.value
        if (isinstance(owner, ast.Name) and owner.id == "config") or (
            isinstance(owner, ast.Attribute) and owner.attr == "config"
        ):
            return value.attr
    return None


def _class(tree: ast.Module, name: str) -> ast.ClassDef:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    raise ExtractError(f"no class {name}")


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef:
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise ExtractError(f"no {cls.name}.{name}")


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def _is_self_attr(node: ast.expr, attr: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name) \
        and node.value.id == "self"


def module_options_validated(context_source: str) -> bool:
    """``@wp.kernel(module_options=...)`` rejects unknown keys (``ValueError: ... unknown module_options``)."""
    for node in ast.walk(ast.parse(context_source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "unknown module_options" in node.value:
            return True
    return False


def kernel_takes_module_options(context_source: str) -> bool:
    """``@wp.kernel`` has a ``module_options`` parameter (without it the argument is a ``TypeError``)."""
    kernel = _function(ast.parse(context_source), "kernel")
    if kernel is None:
        raise ExtractError("no module-level def kernel")
    return any(a.arg == "module_options" for a in (*kernel.args.args, *kernel.args.kwonlyargs))


def launch_block_dim_default(context_source: str) -> int:
    """The CUDA block size of a ``wp.launch`` without ``block_dim``: the signature's default, or (where the
    signature says ``None``) the CUDA side of ``default = 1 if device.is_cpu else N`` in the resolver."""
    tree = ast.parse(context_source)
    launch = _function(tree, "launch")
    if launch is None:
        raise ExtractError("no module-level def launch")
    default = _parameter_default(launch, "block_dim")
    if isinstance(default, ast.Constant) and isinstance(default.value, int) and not isinstance(default.value, bool):
        return default.value
    resolver = _function(tree, "_resolve_launch_block_dim")
    if resolver is not None:
        for node in ast.walk(resolver):
            if (
                isinstance(node, ast.IfExp) and isinstance(node.test, ast.Attribute) and node.test.attr == "is_cpu"
                and isinstance(node.orelse, ast.Constant) and isinstance(node.orelse.value, int)
            ):
                return node.orelse.value
    raise ExtractError("cannot tell wp.launch's default block_dim")


def _parameter_default(fn: ast.FunctionDef, name: str) -> ast.expr | None:
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    for arg, default in zip(positional[len(positional) - len(args.defaults):], args.defaults, strict=True):
        if arg.arg == name:
            return default
    for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if arg.arg == name:
            return kw_default
    return None


# ---------------------------------------------------------------------------------------------- MathDx


@dataclass(frozen=True)
class MathDxOp:
    """A builtin declared with ``lto_dispatch_func=``: whether its CUDA dispatch builds an LTO at all, whether
    it builds more under the module's ``enable_backward``, and the option that turns its MathDx path off."""

    name: str
    builds_lto: bool
    backward_lto: bool
    option: str | None


def mathdx_ops(builtins_source: str) -> dict[str, MathDxOp]:
    """Every ``add_builtin("name", ..., lto_dispatch_func=F)`` of ``builtins.py``, with what ``F`` builds.

    ``F`` is followed as Warp calls it: a module function, a ``functools.partial`` of one (its keywords
    bound), or a wrapper that calls ``_impl(True, *args, **kwargs)`` (its leading constants bound). Inside,
    constant conditions (``if inplace:``) are folded, statements after a ``return`` are unreachable, and a
    ``*.build_lto_*(...)`` call inside an ``if`` that tests ``enable_backward`` is a backward LTO."""
    tree = ast.parse(builtins_source)
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    ops: dict[str, MathDxOp] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "add_builtin"):
            continue
        dispatch = next((k.value for k in node.keywords if k.arg == "lto_dispatch_func"), None)
        if dispatch is None or not node.args:
            continue
        name_node = node.args[0]
        if not (isinstance(name_node, ast.Constant) and isinstance(name_node.value, str)):
            raise ExtractError("add_builtin with lto_dispatch_func= and a name that is not a literal")
        target, bindings = _dispatch_target(dispatch)
        if target not in functions:
            raise ExtractError(f"{name_node.value}: lto_dispatch_func {target!r} is not a module-level function")
        scan = _Scan(functions)
        scan.function(functions[target], bindings, backward=False, depth=0)
        op = MathDxOp(name_node.value, scan.forward or scan.backward, scan.backward, scan.option)
        previous = ops.get(op.name)
        if previous is not None and previous != op:  # overloads must agree; else the table cannot say one thing
            raise ExtractError(f"{op.name}: overloads dispatch differently")
        ops[op.name] = op
    return ops


def _dispatch_target(node: ast.expr) -> tuple[str, dict[str, object]]:
    if isinstance(node, ast.Name):
        return node.id, {}
    if (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "partial"
        and node.args and isinstance(node.args[0], ast.Name)
    ):
        bound: dict[str, object] = {
            k.arg: k.value.value for k in node.keywords if k.arg and isinstance(k.value, ast.Constant)
        }
        return node.args[0].id, bound
    raise ExtractError(f"unknown lto_dispatch_func shape: {ast.dump(node)[:80]}")


_UNKNOWN = object()


class _Scan:
    """What one dispatch function builds, reachable paths only."""

    MAX_DEPTH = 3

    def __init__(self, functions: dict[str, ast.FunctionDef]) -> None:
        self.functions = functions
        self.forward = False
        self.backward = False
        self.option: str | None = None

    def function(self, fn: ast.FunctionDef, bindings: dict[str, object], backward: bool, depth: int) -> None:
        self.block(fn.body, bindings, backward, depth)

    def block(self, body: list[ast.stmt], env: dict[str, object], backward: bool, depth: int) -> bool:
        """Scan statements in order; True when the block always leaves (return/raise) before its end."""
        for stmt in body:
            if isinstance(stmt, ast.If):
                condition = _evaluate(stmt.test, env)
                self.expressions([stmt.test], env, backward, depth)
                inner_backward = backward or _mentions(stmt.test, "enable_backward")
                if condition is True:
                    leaves = self.block(stmt.body, env, inner_backward, depth)
                elif condition is False:
                    leaves = self.block(stmt.orelse, env, backward, depth)
                else:
                    taken = self.block(stmt.body, env, inner_backward, depth)
                    other = self.block(stmt.orelse, env, backward, depth)
                    leaves = taken and other
                if leaves:
                    return True
            elif isinstance(stmt, (ast.Return, ast.Raise)):
                self.expressions([n for n in ast.iter_child_nodes(stmt) if isinstance(n, ast.expr)], env,
                                 backward, depth)
                return True
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue  # a local helper: scanned where it is called only if it is a module function
            elif isinstance(stmt, (ast.For, ast.While, ast.With, ast.Try)):
                self.expressions([n for n in ast.iter_child_nodes(stmt) if isinstance(n, ast.expr)], env,
                                 backward, depth)
                for part in ("body", "orelse", "finalbody"):
                    self.block(getattr(stmt, part, []) or [], env, backward, depth)
                for handler in getattr(stmt, "handlers", []) or []:
                    self.block(handler.body, env, backward, depth)
            else:
                self.expressions([stmt], env, backward, depth)
        return False

    def expressions(self, nodes: list, env: dict[str, object], backward: bool, depth: int) -> None:
        for root in nodes:
            for node in ast.walk(root):
                if isinstance(node, (ast.Subscript, ast.Call)):
                    self._note_option(node)
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                if isinstance(func, ast.Attribute) and func.attr.startswith("build_lto"):
                    if backward:
                        self.backward = True
                    else:
                        self.forward = True
                elif isinstance(func, ast.Name) and func.id in self.functions and depth < self.MAX_DEPTH:
                    callee = self.functions[func.id]
                    self.function(callee, _bind(callee, node, env), backward, depth + 1)

    def _note_option(self, node: ast.expr) -> None:
        """``options["enable_mathdx_X"]`` / ``options.get("enable_mathdx_X", ...)``: the op's MathDx switch."""
        key: ast.expr | None = None
        if isinstance(node, ast.Subscript):
            key = node.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and node.args:
            key = node.args[0]
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.startswith("enable_mathdx_"):
            self.option = key.value


def _bind(callee: ast.FunctionDef, call: ast.Call, env: dict[str, object]) -> dict[str, object]:
    """Parameters of ``callee`` bound to the constant (or already bound) arguments of ``call``."""
    bound: dict[str, object] = {}
    params = [*callee.args.posonlyargs, *callee.args.args]
    for param, arg in zip(params, call.args, strict=False):
        if isinstance(arg, ast.Starred):
            break
        value = _evaluate(arg, env)
        if value is not _UNKNOWN:
            bound[param.arg] = value
    for keyword in call.keywords:
        if keyword.arg is not None:
            value = _evaluate(keyword.value, env)
            if value is not _UNKNOWN:
                bound[keyword.arg] = value
    return bound


def _evaluate(node: ast.expr, env: dict[str, object]) -> object:
    """A constant, a bound name, ``not``/``and``/``or``/``==`` of those; else _UNKNOWN."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id, _UNKNOWN)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        value = _evaluate(node.operand, env)
        return _UNKNOWN if value is _UNKNOWN else not value
    if isinstance(node, ast.BoolOp):
        values = [_evaluate(v, env) for v in node.values]
        if isinstance(node.op, ast.And):
            if any(v is not _UNKNOWN and not v for v in values):
                return False
            return True if all(v is not _UNKNOWN for v in values) else _UNKNOWN
        if any(v is not _UNKNOWN and v for v in values):
            return True
        return False if all(v is not _UNKNOWN for v in values) else _UNKNOWN
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
        left, right = _evaluate(node.left, env), _evaluate(node.comparators[0], env)
        if left is _UNKNOWN or right is _UNKNOWN:
            return _UNKNOWN
        return (left == right) if isinstance(node.ops[0], ast.Eq) else (left != right)
    return _UNKNOWN


def _mentions(node: ast.expr, text: str) -> bool:
    return any(
        (isinstance(n, ast.Constant) and n.value == text) or (isinstance(n, ast.Attribute) and n.attr == text)
        for n in ast.walk(node)
    )


# ---------------------------------------------------------------------------------------------- modules


def public_modules(wheel_names: Iterable[str]) -> frozenset[str]:
    """Importable ``warp.X`` modules of a wheel (``warp/X.py`` or ``warp/X/__init__.py``), by dotted name."""
    found: set[str] = set()
    for name in wheel_names:
        parts = name.split("/")
        if parts[0] != "warp" or len(parts) < 2:
            continue
        if len(parts) == 2 and parts[1].endswith(".py") and parts[1] != "__init__.py":
            found.add(f"warp.{parts[1][:-3]}")
        elif len(parts) == 3 and parts[2] == "__init__.py" and not parts[1].startswith("_"):
            found.add(f"warp.{parts[1]}")
    return frozenset(found)


# ---------------------------------------------------------------------------------------------- value types


@dataclass(frozen=True)
class ValueTypes:
    """Warp's built-in value types as ``types.py`` defines them.

    ``types``: every name of a scalar (``scalar_and_bool_types``) or a built-in composite type (``vector_types``)
    and of an alias of one (``vec3 = vec3f``), mapped to (the class's own name, its constructor, the
    constructor's arguments but ``dtype``, the scalar ``dtype``): ``vec3`` -> ``("vec3f", "vector", (3,),
    "float32")``, ``float32`` -> ``("float32", "", (), "float32")``. ``constructors``: each function those
    classes are built from (``vector``, ``matrix``, ``quaternion``, ``transformation``) -> its parameters."""

    types: dict[str, tuple[str, str, tuple, str]]
    constructors: dict[str, tuple[str, ...]]


def value_types(types_source: str) -> ValueTypes:
    tree = ast.parse(types_source)
    tuples = dict(_module_assignments(tree))
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    types: dict[str, tuple[str, str, tuple, str]] = {
        name: (name, "", (), name) for name in _names_of(tuples, "scalar_and_bool_types", 0)}
    constructors: dict[str, tuple[str, ...]] = {}
    for name in _names_of(tuples, "vector_types", 0):
        cls = classes.get(name)
        base = cls.bases[0] if cls is not None and len(cls.bases) == 1 else None
        if not (isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id in functions):
            raise ExtractError(f"the built-in type {name} is not a class made by a call of a types.py function")
        maker = functions[base.func.id]
        params = tuple(a.arg for a in (*maker.args.posonlyargs, *maker.args.args))
        bound = dict(zip(params, base.args, strict=False)) | {k.arg: k.value for k in base.keywords if k.arg}
        dtype = bound.pop("dtype", None)
        if not (isinstance(dtype, ast.Name) and dtype.id in types and types[dtype.id][1] == ""):
            raise ExtractError(f"the built-in type {name} has no scalar dtype")
        try:
            arguments = tuple(ast.literal_eval(bound[p]) for p in params if p in bound)
        except ValueError as error:
            raise ExtractError(f"the built-in type {name} is made of arguments that are not literals") from error
        constructors[maker.name] = params
        types[name] = (name, maker.name, arguments, dtype.id)
    for target, value in _module_assignments(tree):
        if isinstance(value, ast.Name) and value.id in types and target not in types:
            types[target] = types[value.id]  # `vec3 = vec3f`: the same class object
    return ValueTypes(types, constructors)


def python_scalar_types(types_source: str) -> dict[str, str]:
    """What Warp makes of a Python scalar type where it takes a ``dtype``: the branches of ``type_to_warp`` in
    ``types.py`` (``if dtype is float: return float32``; ``==`` in 1.10), as {Python's name: Warp's scalar}
    (``float`` -> ``float32``). A name the module binds itself is Warp's (its ``class bool``), not Python's
    (``builtins.bool``). ``vector``, ``matrix`` and ``array`` canonicalise their ``dtype`` in place the same way
    (``if dtype is float: dtype = float32``; ``quaternion`` and ``transformation`` pass it to ``vector``; an array
    annotation of 1.19 goes through ``type_to_warp``): an ExtractError when one of them maps a type another way,
    so a release where they part is seen when its table is built (1.10 to 1.19 map alike)."""
    tree = ast.parse(types_source)
    own = _module_names(tree)
    converter = _function(tree, "type_to_warp")
    if converter is None:
        raise ExtractError("types.py has no type_to_warp")
    found = _python_type_branches(converter, own)
    if not found:
        raise ExtractError("type_to_warp maps no Python type")
    array = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "array"), None)
    makers = {"vector": _function(tree, "vector"), "matrix": _function(tree, "matrix"),
              "array": next((n for n in array.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"),
                            None) if array is not None else None}
    for name, maker in makers.items():
        inline = _python_type_branches(maker, own) if maker is not None else {}
        if inline and inline != found:
            raise ExtractError(f"{name}() maps Python's types as {inline}, type_to_warp as {found}")
    return found


def _module_names(tree: ast.Module) -> set[str]:
    """The names a module binds at its top level (classes, functions, assignments, imports)."""
    names = {target for target, _ in _module_assignments(tree)}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _python_type_branches(function: ast.FunctionDef, own: set[str]) -> dict[str, str]:
    """``if <parameter> is <Python type>: return <name>`` (or ``<parameter> = <name>``), and its ``elif``s,
    among the function's top-level statements: {the Python type's name: the name}."""
    params = {a.arg for a in (*function.args.posonlyargs, *function.args.args)}
    found: dict[str, str] = {}
    branches = [node for node in function.body if isinstance(node, ast.If)]
    while branches:
        node = branches.pop(0)
        if node.orelse and len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            branches.insert(0, node.orelse[0])
        test = node.test
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.Eq))
                and isinstance(test.left, ast.Name) and test.left.id in params and node.body):
            continue
        compared = test.comparators[0]
        if isinstance(compared, ast.Attribute) and isinstance(compared.value, ast.Name) \
                and compared.value.id == "builtins":
            python = compared.attr
        elif isinstance(compared, ast.Name) and compared.id not in own:
            python = compared.id
        else:
            continue
        first = node.body[0]
        if not isinstance(first, (ast.Return, ast.Assign)):
            continue
        if isinstance(first, ast.Assign) and not (len(first.targets) == 1 and isinstance(first.targets[0], ast.Name)
                                                  and first.targets[0].id == test.left.id):
            continue  # assigns another name than the parameter
        if isinstance(first.value, ast.Name):
            found[python] = first.value.id
    return found


def _names_of(assignments: dict[str, ast.expr | None], name: str, depth: int) -> tuple[str, ...]:
    """The names a module-level tuple of names holds: ``(a, b)``, ``x + y``, ``(*x, b)`` of other such tuples."""
    def expand(node: ast.expr | None) -> tuple[str, ...]:
        if isinstance(node, ast.Tuple):
            return tuple(n for element in node.elts for n in expand(element))
        if isinstance(node, ast.Starred):
            return expand(node.value)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return expand(node.left) + expand(node.right)
        if isinstance(node, ast.Name):
            return _names_of(assignments, node.id, depth + 1) if isinstance(
                assignments.get(node.id), (ast.Tuple, ast.BinOp)) and depth < 8 else (node.id,)
        raise ExtractError(f"`{name}` is not a tuple of names")

    if name not in assignments:
        raise ExtractError(f"no module-level `{name}`")
    return expand(assignments[name])


def public_type_names(namespace: str, source: str, value_type_names: Iterable[str]) -> dict[str, str]:
    """The public spellings ``namespace.Y`` (``warp``, ``warp.types``) of the value types and their constructors
    that a public module of Warp gives another name or that exist only there: ``from warp._src.types import X as
    Y`` (``warp.vec`` is ``vector`` in 1.10), and every name of ``warp._src.types`` when the module forwards
    unknown attributes to it (``def __getattr__`` over ``from warp._src import types as _types``, deprecated).
    The spelling ``warp.X`` of a name ``X`` of ``warp._src.types`` is its own (the binder writes ``warp._src.types.X``
    that way)."""
    tree = ast.parse(source)
    known = set(value_type_names)
    found: dict[str, str] = {}
    forwarding_module = ""
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "warp._src.types":
            for alias in node.names:
                spelt = alias.asname or alias.name
                if alias.name in known and f"{namespace}.{spelt}" != f"warp.{alias.name}":  # not its own
                    found[f"{namespace}.{spelt}"] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module == "warp._src":
            forwarding_module = next((a.asname or a.name for a in node.names if a.name == "types"), forwarding_module)
    getattr_ = _function(tree, "__getattr__")
    if forwarding_module and getattr_ is not None and any(
            isinstance(n, ast.Name) and n.id == forwarding_module for n in ast.walk(getattr_)):
        for name in known:
            if f"{namespace}.{name}" != f"warp.{name}":
                found.setdefault(f"{namespace}.{name}", name)
    return found
