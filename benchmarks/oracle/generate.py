"""A seeded, deterministic generator of small Warp programs.

A program injects one mechanism (``axes.MECHANISMS``: the defect, or a harmless look-alike) and composes it
with four independent axes: how its key kernel is created, how its key value (kernel, module name,
block_dim, dtype, option value) reaches the call, when its steps run, and how it is laid out in files. The
generator's intent (``Program.intent``) is a hypothesis only: the label comes from running the program.

Each program is a dict of files (relative path -> text) and a command; the same (seed, index, depth) always
gives the same text. Code is written with role references ``K::name`` (the kernel module), ``H::name`` (the
helpers module), ``U::name`` (the utility module that holds the project's kernel decorator) and ``D::name``
(the driver), resolved per file when the program is rendered: a bare name in the same file, ``alias.name``
across files (with the import added).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

from .axes import AXES, CREATION, DELIVERY, GENERATOR_VERSION, LAYOUT, MECHANISMS, TIMING, catalogue

SECTIONS = ("early", "imports", "kernels", "late", "helpers", "phases", "entry")
ROLE_REF = re.compile(r"\b([KHUD])::(\w+)")
MARK = re.compile(r"\s*#@(\w+)$")  # a line the generator marks (intent); stripped from the output
FACTORY_FORMS = ("factory", "class_method", "closure", "functools_cache", "lru_cache", "dict_cache")
PARAM_FORMS = ("param_positional", "param_keyword", "param_default", "param_varargs", "param_kwargs", "partial")
WRAPPER_FORMS = ("wrapper_func_1", "wrapper_func_2", "wrapper_method")
# delivery forms that work at module scope (a decorator's module=, a kernel file's constant)
AT_USE = {"module_constant": "tuple_unpack", "list_item": "dict_filled_later", "dict_literal": "dict_filled_later",
          "runtime_key_table": "dict_filled_later", "class_attr": "attr_self", "return_1": "param_positional",
          "return_2": "param_keyword", "param_default": "param_keyword"}
MODULE_SCOPE_DELIVERY = ("direct", "module_constant", "class_attr", "list_item", "dict_literal", "dict_filled_later",
                         "runtime_key_table", "return_1", "return_2", "runtime_computed", "tuple_unpack",
                         "attr_self", "dataclass_field", "enum_member", "frozen_dataclass", "simple_namespace",
                         "global_setter")
AT_USE.update({"enum_member": "simple_namespace", "frozen_dataclass": "namedtuple_field"})  # version 2's
AT_USE.update({"none_default": "param_keyword"})  # version 3's: the default is written in the helper
# decorator forms: the kernel is made where its ``def`` runs (a late kernel's decorated def sits at the use)
DECORATOR_FORMS = ("decorator", "project_decorator", "partial_decorator", "registry_decorator")
# single-file pytest timings: the driver is tests/test_app.py, whose module is ``test_app``
PYTEST_ONE_FILE = ("pytest_one_file", "pytest_unittest_class", "pytest_fixture", "pytest_parametrize")


@dataclass
class Program:
    seed: int
    index: int
    depth: int
    mechanism: str
    variant: str
    axes: dict[str, str]
    files: dict[str, str]
    command: list[str]  # argv after the Python executable
    intent: dict[str, Any]
    marks: dict[str, list[list]] = field(default_factory=dict)  # tag -> [[path, line], ...]

    @property
    def digest(self) -> str:
        return program_digest(self.files, self.command)

    @property
    def name(self) -> str:
        return f"s{self.seed}-{self.index:04d}"

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "index": self.index, "depth": self.depth, "mechanism": self.mechanism,
                "variant": self.variant, "axes": dict(self.axes), "files": dict(self.files),
                "command": list(self.command), "intent": dict(self.intent), "marks": self.marks,
                "digest": self.digest}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Program:
        return cls(seed=d["seed"], index=d["index"], depth=d["depth"], mechanism=d["mechanism"],
                   variant=d["variant"], axes=dict(d["axes"]), files=dict(d["files"]), command=list(d["command"]),
                   intent=dict(d["intent"]), marks={k: [list(x) for x in v] for k, v in d.get("marks", {}).items()})


def program_digest(files: dict[str, str], command: list[str]) -> str:
    h = hashlib.sha256()
    h.update(json.dumps({"files": files, "command": command}, sort_keys=True).encode())
    return h.hexdigest()[:20]


# ---------------------------------------------------------------------------------------------------------
# files and roles


class Layout:
    """Which file each role lives in, and how roles refer to each other."""

    def __init__(self, layout: str, timing: str):
        self.layout = layout
        self.timing = timing
        pkg = layout != "single"
        n = int(layout[-1]) if pkg else 1
        if timing in PYTEST_ONE_FILE:
            driver = "tests/test_app.py"
        elif timing == "pytest_files_conftest":
            driver = "tests/test_1_setup.py"  # phase 1; later phases in tests/test_2_run.py (same sections)
        else:
            driver = "main.py"
        self.path = {"D": driver}
        self.path["K"] = "pkg/kernels.py" if pkg else driver
        self.path["H"] = "pkg/helpers.py" if n >= 3 else self.path["K"] if pkg else driver
        self.path["U"] = "pkg/util.py" if n >= 4 else self.path["H"]
        self.modname = {"pkg/kernels.py": "pkg.kernels", "pkg/helpers.py": "pkg.helpers", "pkg/util.py": "pkg.util"}
        self.alias = {"pkg/kernels.py": "kernels", "pkg/helpers.py": "helpers", "pkg/util.py": "util"}

    def same(self, a: str, b: str) -> bool:
        return self.path[a] == self.path[b]


class Builder:
    def __init__(self, layout: Layout, rng: random.Random):
        self.lay = layout
        self.rng = rng
        self.sections: dict[str, dict[str, list[str]]] = {}
        self.imports: dict[str, set[str]] = {}
        self.counter = 0
        self.phases: list[list[str]] = []
        self.extra_files: dict[str, str] = {}
        # roles whose module the driver imports even where it names nothing of it (a registry is filled when
        # the kernels' module is imported)
        self.driver_imports: set[str] = set()

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}_{self.counter}"

    def add(self, role: str, section: str, code: str) -> None:
        path = self.lay.path[role]
        self.sections.setdefault(path, {s: [] for s in SECTIONS})[section].append(textwrap.dedent(code).strip("\n"))

    def need(self, role: str, module: str) -> None:
        self.imports.setdefault(self.lay.path[role], set()).add(module)

    def phase(self, *stmts: str) -> None:
        self.phases.append([textwrap.dedent(s).strip("\n") for s in stmts])

    # -- rendering ------------------------------------------------------------------------------------
    def resolve(self, path: str, text: str, pkg_imports: set[str]) -> str:
        def sub(m: re.Match) -> str:
            target = self.lay.path[m.group(1)]
            if target == path or (target == self.lay.path["D"] and path.startswith("tests/")):
                return m.group(2)
            alias = self.lay.alias[target]
            pkg_imports.add(alias)
            return f"{alias}.{m.group(2)}"

        return ROLE_REF.sub(sub, text)

    def render_file(self, path: str, secs: dict[str, list[str]], imports: set[str]) -> str:
        pkg_imports: set[str] = set()
        body = {s: [self.resolve(path, b, pkg_imports) for b in secs[s]] for s in SECTIONS}
        if path in (self.lay.path["D"], "tests/test_2_run.py"):
            pkg_imports.update(self.lay.alias[self.lay.path[r]] for r in self.driver_imports
                               if self.lay.path[r] != self.lay.path["D"])
        head = ["import warp as wp"] + [f"import {m}" for m in sorted(imports)]
        if "dataclasses" in imports:
            head.append("from typing import Any")
        if any("Any" in b for s in body.values() for b in s) and "from typing import Any" not in head:
            head.append("from typing import Any")
        out = "\n".join(head) + "\n"
        if body["early"]:
            out += "\n" + "\n".join(body["early"]) + "\n"
        if pkg_imports:
            out += "\n" + "\n".join(f"from pkg import {a}" for a in sorted(pkg_imports)) + "\n"
        for s in ("kernels", "late", "helpers", "phases", "entry"):
            for block in body[s]:
                out += "\n\n" + block + "\n" if s != "late" else "\n" + block + "\n"
        return out.lstrip("\n")


# ---------------------------------------------------------------------------------------------------------
# kernel text


def kernel_def(name: str, c: str = "1.0", deco: str = "@wp.kernel", generic: bool | str = False) -> str:
    """``generic``: True for ``wp.array(dtype=Any)``, "untyped" for ``wp.array(ndim=1)`` (no dtype: generic too)."""
    if generic == "untyped":
        return (f"{deco}\ndef {name}(a: wp.array(ndim=1)):\n    i = wp.tid()\n    a[i] = a[i] + a[i]\n")
    if generic:
        return (f"{deco}\ndef {name}(a: wp.array(dtype=Any)):\n    i = wp.tid()\n    a[i] = a[i] + a[i]\n")
    return f"{deco}\ndef {name}(a: wp.array(dtype=float)):\n    i = wp.tid()\n    a[i] = a[i] + {c}\n"


def plain_def(name: str, c: str = "1.0", generic: bool | str = False) -> str:
    return kernel_def(name, c, deco="", generic=generic).lstrip("\n")


def indent(code: str, n: int = 4) -> str:
    return textwrap.indent(code, " " * n)


def deco_of(kw: dict[str, str]) -> str:
    if not kw:
        return "@wp.kernel"
    return "@wp.kernel(" + ", ".join(f"{k}={v}" for k, v in kw.items()) + ")"


def launch_text(kernel: str, dtype: str = "float", block_dim: str | None = None, adjoint: bool = False) -> str:
    """A launch on the default device (the CPU here, a GPU where there is one): the programs say nothing
    about the device, as most Warp code does not."""
    bd = f", block_dim={block_dim}" if block_dim is not None else ""
    if adjoint:
        return (f"wp.launch({kernel}, dim=4, inputs=[wp.zeros(4, dtype={dtype})], "
                f"adj_inputs=[wp.ones(4, dtype={dtype})], adjoint=True{bd})")
    return f"wp.launch({kernel}, dim=4, inputs=[wp.zeros(4, dtype={dtype})]{bd})"


class Creator:
    """Makes a kernel with one creation form; ``obtain(c)`` is (pre-statements, expression) at the use."""

    def __init__(self, b: Builder, form: str, role: str = "K", kw: dict[str, str] | None = None,
                 generic: bool | str = False, param_module: tuple[str, str] | None = None):
        self.b = b
        self.form = form
        self.role = role
        self.kw = dict(kw or {})
        self.generic = generic
        self.param_module = param_module  # (delivery form, value): module= passed as a factory parameter
        self.name = b.fresh("k")
        self._defined = False
        self.inline = False  # decorator forms: the decorated def sits at the use (inside the run path)
        # what a partial of wp.kernel binds: forward-only kernels, but backward for kernels the program
        # differentiates (an adjoint launch of a kernel made without backward raises)
        self.backward = "False"

    @property
    def varying(self) -> bool:
        """Does ``obtain(c)`` put ``c`` into the kernel's content?"""
        return self.form not in ("decorator", "singleton", "wp_kernel_later", "kernel_opts_call", "project_decorator",
                                 "partial_decorator", "partial_call", "comprehension", "getattr_lookup",
                                 "class_attr_kernel", "registry_decorator")

    def _k(self, c: str) -> str:
        return kernel_def("k", c, deco_of(self.kw), self.generic)

    def define(self, c: str = "1.0") -> None:
        if self._defined:
            return
        self._defined = True
        b, n, r = self.b, self.name, self.role
        f = self.form
        if self.inline and f in DECORATOR_FORMS:
            if f != "decorator":
                self._shared_helper(f)
            return
        if f in ("partial_decorator", "registry_decorator"):
            self._shared_helper(f)
            b.add(r, "kernels", kernel_def(self._kernel_name(), c, self._decorator(), self.generic))
        elif f in ("getattr_lookup", "class_attr_kernel"):
            b.add(r, "kernels", kernel_def(n, c, deco_of(self.kw), self.generic))
            if f == "class_attr_kernel":  # a kernel object is no descriptor: read through an instance, it is itself
                b.add(r, "kernels", f"class Ops_{n}:\n    kernel = {n}\n\n    def __init__(self, c):\n"
                                    f"        self.c = c\n")
        elif f == "partial_call":
            b.need("D", "functools")
            b.add(r, "kernels", plain_def(f"{n}_py", c, self.generic))
        elif f == "comprehension":
            b.add(r, "kernels", f"def make_{n}(c):\n{indent(self._k('c'))}\n    return k\n\n\n"
                                f"KERNELS_{n} = {{c: make_{n}(c) for c in (1.0, 2.0, 3.0, 4.0)}}\n")
        elif f == "decorator":
            b.add(r, "kernels", kernel_def(n, c, deco_of(self.kw), self.generic))
        elif f in ("wp_kernel_later", "kernel_opts_call"):
            b.add(r, "kernels", plain_def(f"{n}_py", c, self.generic))
        elif f == "project_decorator":
            self._project_decorator()
            args = ", ".join(f"{k}={v}" for k, v in self.kw.items())
            deco = f"@U::project_kernel({args})" if args else "@U::project_kernel"
            b.add(r, "kernels", kernel_def(n, c, deco, self.generic))
        elif f in ("factory", "functools_cache", "lru_cache"):
            if f != "factory":
                b.need(r, "functools")
            memo = {"factory": "", "functools_cache": "@functools.cache\n",
                    "lru_cache": "@functools.lru_cache(maxsize=None)\n"}[f]
            sig, kw_pass = self._module_param()
            b.add(r, "kernels", f"{memo}def make_{n}(c{sig}):\n{indent(self._k_kw('c', kw_pass))}\n    return k\n")
        elif f == "class_method":
            sig, kw_pass = self._module_param()
            b.add(r, "kernels", f"class Factory_{n}:\n    def build(self, c{sig}):\n"
                                f"{indent(self._k_kw('c', kw_pass), 8)}\n        return k\n")
        elif f == "closure":
            sig, kw_pass = self._module_param()
            b.add(r, "kernels", f"def outer_{n}(c{sig}):\n    def build():\n{indent(self._k_kw('c', kw_pass), 8)}\n"
                                f"        return k\n\n    return build\n")
        elif f in ("property", "cached_property"):
            if f == "cached_property":
                b.need(r, "functools")
            deco = "@property" if f == "property" else "@functools.cached_property"
            b.add(r, "kernels", f"class Model_{n}:\n    def __init__(self, c):\n        self.c = c\n\n"
                                f"    {deco}\n    def kernel(self):\n        c = self.c\n\n{indent(self._k('c'), 8)}\n"
                                f"        return k\n")
        elif f == "descriptor":
            b.add(r, "kernels", f"class KernelAttr_{n}:\n    def __get__(self, obj, owner=None):\n"
                                f"        c = obj.c\n\n{indent(self._k('c'), 8)}\n        return k\n\n\n"
                                f"class Holder_{n}:\n    kernel = KernelAttr_{n}()\n\n"
                                f"    def __init__(self, c):\n        self.c = c\n")
        elif f == "dict_cache":
            sig, kw_pass = self._module_param()
            b.add(r, "kernels", f"_CACHE_{n} = {{}}\n\n\ndef get_{n}(c{sig}):\n    if c not in _CACHE_{n}:\n"
                                f"{indent(self._k_kw('c', kw_pass), 8)}\n        _CACHE_{n}[c] = k\n"
                                f"    return _CACHE_{n}[c]\n")
        elif f == "self_none":
            b.add(r, "kernels", f"class Solver_{n}:\n    def __init__(self, c):\n        self.c = c\n"
                                f"        self._k = None\n\n    def kernel(self):\n        if self._k is None:\n"
                                f"            c = self.c\n\n{indent(self._k('c'), 12)}\n            self._k = k\n"
                                f"        return self._k\n")
        elif f == "singleton":
            b.add(r, "kernels", f"_K_{n} = None\n\n\ndef get_{n}():\n    global _K_{n}\n    if _K_{n} is None:\n"
                                f"{indent(self._k(c), 8)}\n        _K_{n} = k\n    return _K_{n}\n")
        else:  # pragma: no cover - catalogue and code agree
            raise ValueError(f)

    def _kernel_name(self) -> str:
        """The ``def``'s name: a registry decorator returns the function, so the name is the Python function's."""
        return f"{self.name}_py" if self.form == "registry_decorator" else self.name

    def _decorator(self) -> str:
        """The decorator line of a version-2 decorator form (with the creator's options)."""
        args = ", ".join(f"{k}={v}" for k, v in self.kw.items())
        if self.form == "partial_decorator":
            return f"@U::fwd_kernel({args})" if args else "@U::fwd_kernel"
        return f"@U::register_kernel(\"{self.name}\"" + (f", {args})" if args else ")")

    def _shared_helper(self, form: str) -> None:
        """The project's helper a decorator form uses, written once in the utility module."""
        if form == "project_decorator":
            self._project_decorator()
            return
        key = f"_{form}_defined"
        if getattr(self.b, key, False):
            return
        setattr(self.b, key, True)
        section = "helpers" if self.b.lay.path["U"] != self.b.lay.path["K"] else "early"
        if form == "partial_decorator":
            self.b.need("U", "functools")
            self.b.add("U", section, f"fwd_kernel = functools.partial(wp.kernel, enable_backward={self.backward})\n")
        else:  # a registry: the decorator stores the kernel it makes and hands the function back
            self.b.add("U", section, "KERNEL_REGISTRY = {}\n\n\ndef register_kernel(name, **options):\n"
                                     "    def deco(f):\n        KERNEL_REGISTRY[name] = wp.kernel(f, **options)\n"
                                     "        return f\n\n    return deco\n")

    def _project_decorator(self) -> None:
        key = "_project_kernel_defined"
        if getattr(self.b, key, False):
            return
        setattr(self.b, key, True)
        self.b.add("U", "helpers" if self.b.lay.path["U"] != self.b.lay.path["K"] else "early",
                   "def project_kernel(fn=None, **options):\n    def wrap(f):\n"
                   "        return wp.kernel(f, **options)\n\n"
                   "    return wrap(fn) if fn is not None else wrap\n")

    def _module_param(self) -> tuple[str, str]:
        """A factory's module= as its own parameter (delivered by a parameter form), or ('', '')."""
        if self.param_module is None:
            return "", ""
        form, value = self.param_module
        if form == "param_default":
            return f", module={value}", "module"
        return ", module=None", "module"

    def _k_kw(self, c: str, kw_pass: str) -> str:
        kw = dict(self.kw)
        if kw_pass:
            kw["module"] = kw_pass
        return kernel_def("k", c, deco_of(kw), self.generic)

    def _call_args(self, c: str) -> str:
        if self.param_module is None:
            return c
        form, value = self.param_module
        if form == "param_default":
            return c
        if form == "param_keyword" or form == "param_kwargs":
            return f"{c}, module={value}"
        return f"{c}, {value}"

    def obtain(self, c: str = "1.0") -> tuple[list[str], str]:
        """Statements and the expression that give the kernel at a use site in the driver."""
        self.define(c)
        n, f = self.name, self.form
        ref = f"K::{n}" if self.role == "K" else f"D::{n}"
        pre: list[str] = []
        if self.inline and f in ("partial_decorator", "registry_decorator"):
            made = [kernel_def(self._kernel_name(), c, self._decorator(), self.generic).rstrip("\n")]
            return made, (n if f == "partial_decorator" else f"U::KERNEL_REGISTRY[\"{n}\"]")
        if self.inline and f in ("decorator", "project_decorator"):
            if f == "decorator":
                deco = deco_of(self.kw)
            else:
                args = ", ".join(f"{k}={v}" for k, v in self.kw.items())
                deco = f"@U::project_kernel({args})" if args else "@U::project_kernel"
            return [kernel_def(n, c, deco, self.generic).rstrip("\n")], n
        if f in ("decorator", "project_decorator", "partial_decorator"):
            return pre, ref
        if f == "registry_decorator":
            self.b.driver_imports.add(self.role)
            return pre, f"U::KERNEL_REGISTRY[\"{n}\"]"
        if f == "partial_call":
            opts = {"enable_backward": self.backward, **self.kw}
            var = self.b.fresh("kern")
            args = ", ".join(f"{k}={v}" for k, v in opts.items())
            return [f"{var} = functools.partial(wp.kernel, {args})({ref}_py)"], var
        if f == "getattr_lookup":
            k_path = self.b.lay.path[self.role]
            if k_path == self.b.lay.path["D"]:
                self.b.need("D", "sys")
                return pre, f"getattr(sys.modules[__name__], \"{n}\")"
            self.b.need("D", "importlib")
            return pre, f"getattr(importlib.import_module(\"{self.b.lay.modname[k_path]}\"), \"{n}\")"
        if f == "wp_kernel_later":
            kw = "".join(f", {k}={v}" for k, v in self.kw.items())
            var = self.b.fresh("kern")
            return [f"{var} = wp.kernel({ref}_py{kw})"], var
        if f == "kernel_opts_call":
            opts = dict(self.kw)
            opts.setdefault("enable_backward", "True")
            var = self.b.fresh("kern")
            args = ", ".join(f"{k}={v}" for k, v in opts.items())
            return [f"{var} = wp.kernel({args})({ref}_py)"], var
        base = ref.rsplit("::", 1)[0] + "::"
        if f in ("factory", "functools_cache", "lru_cache"):
            if self.param_module and self.param_module[0] == "partial":
                self.b.need("D", "functools")
                return [], f"functools.partial({base}make_{n}, module={self.param_module[1]})({c})"
            return pre, f"{base}make_{n}({self._call_args(c)})"
        if f == "class_method":
            return pre, f"{base}Factory_{n}().build({self._call_args(c)})"
        if f == "closure":
            return pre, f"{base}outer_{n}({self._call_args(c)})()"
        if f in ("property", "cached_property"):
            return pre, f"{base}Model_{n}({c}).kernel"
        if f == "descriptor":
            return pre, f"{base}Holder_{n}({c}).kernel"
        if f == "dict_cache":
            return pre, f"{base}get_{n}({self._call_args(c)})"
        if f == "self_none":
            return pre, f"{base}Solver_{n}({c}).kernel()"
        if f == "class_attr_kernel":
            return pre, f"{base}Ops_{n}({c}).kernel"
        if f == "comprehension":
            return pre, f"{base}KERNELS_{n}[{c}]"
        if f == "singleton":
            return pre, f"{base}get_{n}()"
        raise ValueError(f)  # pragma: no cover


# ---------------------------------------------------------------------------------------------------------
# delivery of a value to the statement that consumes it


class Key:
    """A statement with one slot; ``kind`` says which wrapper fits it."""

    def __init__(self, kind: str, template: str, slot: str, extra: dict[str, str] | None = None):
        self.kind = kind  # launch | set_options | config
        self.template = template  # text with {v}
        self.slot = slot  # the slot's name: block_dim, dtype, kernel, module, value
        self.extra = dict(extra or {})  # launch: kernel/dtype/block_dim texts; set_options: options/module


def deliver(b: Builder, form: str, key: Key, value: str, role: str = "D",
            is_str: bool = False, is_int: bool = False) -> list[str]:
    """The statements (at the use, in ``role``'s file) that run ``key`` with ``value`` through ``form``."""
    n = b.fresh("v")
    slot = key.slot
    if form == "direct":
        return [key.template.format(v=value)]
    if form == "module_constant":
        const = f"{slot.upper()}_{n.upper()}"
        b.add(role, "late", f"{const} = {value}")
        return [key.template.format(v=const)]
    if form in PARAM_FORMS:
        fn = f"stage_{n}"
        # locals the statement uses besides the slot (a kernel made at the use) are passed along first
        extra = sorted(set(re.findall(r"\bkern_\d+\b", key.template)))
        lead = "".join(f"{x}, " for x in extra)
        if form == "param_varargs":
            unpack = "".join(f"    {x} = args[{i}]\n" for i, x in enumerate(extra))
            b.add(role, "helpers", f"def {fn}(*args):\n{unpack}    {slot} = args[{len(extra)}]\n"
                                   f"    {key.template.format(v=slot)}\n")
            return [f"{fn}({lead}{value})"]
        if form == "param_kwargs":
            unpack = "".join(f"    {x} = kwargs[{x!r}]\n" for x in extra)
            b.add(role, "helpers", f"def {fn}(**kwargs):\n{unpack}    {key.template.format(v=f'kwargs[{slot!r}]')}\n")
            return [f"{fn}(" + "".join(f"{x}={x}, " for x in extra) + f"{slot}={value})"]
        if form == "param_default":
            b.add(role, "helpers", f"def {fn}({lead}{slot}={value}):\n    {key.template.format(v=slot)}\n")
            return [f"{fn}({lead.rstrip(', ')})"]
        b.add(role, "helpers", f"def {fn}({lead}{slot}):\n    {key.template.format(v=slot)}\n")
        if form == "param_keyword":
            return [f"{fn}({lead}{slot}={value})"]
        if form == "partial":
            b.need(role, "functools")
            return [f"functools.partial({fn}, {slot}={value})({lead.rstrip(', ')})"]
        return [f"{fn}({lead}{value})"]
    if form == "attr_self":
        b.add(role, "helpers", f"class Holder_{n}:\n    def __init__(self, {slot}):\n        self.{slot} = {slot}\n")
        return [f"h_{n} = Holder_{n}({value})", key.template.format(v=f"h_{n}.{slot}")]
    if form == "dataclass_field":
        b.need(role, "dataclasses")
        b.add(role, "helpers", f"@dataclasses.dataclass\nclass Settings_{n}:\n    {slot}: Any = None\n")
        return [f"cfg_{n} = Settings_{n}({slot}={value})", key.template.format(v=f"cfg_{n}.{slot}")]
    if form == "class_attr":
        b.add(role, "helpers", f"class Defaults_{n}:\n    {slot} = {value}\n")
        return [key.template.format(v=f"Defaults_{n}.{slot}")]
    if form == "tuple_unpack":
        return [f"_, {slot}_{n} = (0, {value})", key.template.format(v=f"{slot}_{n}")]
    if form == "list_item":
        b.add(role, "late", f"ITEMS_{n} = [{value}]")
        return [key.template.format(v=f"ITEMS_{n}[0]")]
    if form == "dict_literal":
        b.add(role, "late", f"TABLE_{n} = {{{slot!r}: {value}}}")
        return [key.template.format(v=f"TABLE_{n}[{slot!r}]")]
    if form == "dict_filled_later":
        b.add(role, "late", f"TABLE_{n} = {{}}")
        return [f"TABLE_{n}[{slot!r}] = {value}", key.template.format(v=f"TABLE_{n}[{slot!r}]")]
    if form == "runtime_key_table":
        b.need(role, "os")
        b.add(role, "late", f"TABLE_{n} = {{\"default\": {value}, \"fast\": {value}}}")
        return [f"mode_{n} = os.environ.get(\"ORACLE_MODE\", \"default\")",
                key.template.format(v=f"TABLE_{n}[mode_{n}]")]
    if form == "return_1":
        b.add(role, "helpers", f"def get_{n}():\n    return {value}\n")
        return [key.template.format(v=f"get_{n}()")]
    if form == "return_2":
        b.add(role, "helpers", f"def _get_{n}():\n    return {value}\n\n\ndef get_{n}():\n    return _get_{n}()\n")
        return [key.template.format(v=f"get_{n}()")]
    if form == "runtime_computed":
        if is_int:
            b.need(role, "os")
            return [key.template.format(v=f"int(os.environ.get(\"ORACLE_UNSET\", \"{value}\"))")]
        if is_str:
            b.need(role, "os")
            return [key.template.format(v=f"os.environ.get(\"ORACLE_UNSET\", {value})")]
        b.need(role, "random")
        return [key.template.format(v=f"random.choice([{value}])")]
    if form in WRAPPER_FORMS:
        return _wrapped(b, form, key, value)
    if form == "enum_member":  # a member's ``.value`` (a module-scope class: literal values only)
        b.need(role, "enum")
        b.add(role, "late", f"class Choice_{n}(enum.Enum):\n    {slot.upper()} = {value}\n")
        return [key.template.format(v=f"Choice_{n}.{slot.upper()}.value")]
    if form == "namedtuple_field":  # a typing.NamedTuple config made at the use
        b.need(role, "typing")
        b.add(role, "helpers", f"class Config_{n}(typing.NamedTuple):\n    {slot}: Any = None\n")
        return [f"cfg_{n} = Config_{n}({slot}={value})", key.template.format(v=f"cfg_{n}.{slot}")]
    if form == "frozen_dataclass":  # a frozen dataclass's default, one module-scope instance
        b.need(role, "dataclasses")
        b.add(role, "late", f"@dataclasses.dataclass(frozen=True)\nclass Params_{n}:\n    {slot}: Any = {value}\n\n\n"
                            f"PARAMS_{n} = Params_{n}()\n")
        return [key.template.format(v=f"PARAMS_{n}.{slot}")]
    if form == "simple_namespace":
        b.need(role, "types")
        return [f"ns_{n} = types.SimpleNamespace({slot}={value})", key.template.format(v=f"ns_{n}.{slot}")]
    if form == "global_setter":  # a module global that a setter's ``global`` statement rebinds
        const = f"{slot.upper()}_{n.upper()}"
        b.add(role, "late", f"{const} = None")
        b.add(role, "helpers", f"def set_{slot}_{n}(value):\n    global {const}\n    {const} = value\n")
        return [f"set_{slot}_{n}({value})", key.template.format(v=const)]
    if form == "kwargs_splat":  # a dict of keywords splatted into the call of a helper
        fn = f"stage_{n}"
        extra = sorted(set(re.findall(r"\bkern_\d+\b", key.template)))
        lead = "".join(f"{x}, " for x in extra)
        b.add(role, "helpers", f"def {fn}({lead}{slot}):\n    {key.template.format(v=slot)}\n")
        return [f"opts_{n} = {{{slot!r}: {value}}}", f"{fn}({lead}**opts_{n})"]
    if form == "dict_get_default":  # ``options.get(name, default)`` of a dict that does not hold the name
        return [f"options_{n} = {{\"verbose\": False}}", key.template.format(v=f"options_{n}.get({slot!r}, {value})")]
    if form == "none_default":  # a parameter defaulting to None, replaced in the body
        fn = f"stage_{n}"
        extra = sorted(set(re.findall(r"\bkern_\d+\b", key.template)))
        lead = "".join(f"{x}, " for x in extra)
        b.add(role, "helpers", f"def {fn}({lead}{slot}=None):\n    if {slot} is None:\n        {slot} = {value}\n"
                               f"    {key.template.format(v=slot)}\n")
        return [f"{fn}({lead.rstrip(', ')})"]
    if form == "dict_merge":  # a defaults dict merged into another (``{**base, ...}``)
        return [f"base_{n} = {{{slot!r}: {value}}}", f"cfg_{n} = {{**base_{n}, \"verbose\": False}}",
                key.template.format(v=f"cfg_{n}[{slot!r}]")]
    if form == "dataclass_replace":  # a frozen dataclass config copied with one field replaced
        b.need(role, "dataclasses")
        b.add(role, "helpers", f"@dataclasses.dataclass(frozen=True)\nclass Opts_{n}:\n    {slot}: Any = None\n"
                               f"    verbose: bool = False\n")
        return [f"cfg_{n} = dataclasses.replace(Opts_{n}(), {slot}={value})", key.template.format(v=f"cfg_{n}.{slot}")]
    raise ValueError(form)  # pragma: no cover


def _wrapped(b: Builder, form: str, key: Key, value: str) -> list[str]:
    """A launch / options / config wrapper in the helpers module (self-contained: only wp and its params)."""
    n = b.fresh("w")
    ex = dict(key.extra)
    ex[key.slot] = value
    if key.kind == "launch":
        params = "kernel, dtype, block_dim"
        body = ("wp.launch(kernel, dim=4, inputs=[wp.zeros(4, dtype=dtype)], "
                "block_dim=block_dim)")
        args = f"{ex['kernel']}, {ex.get('dtype', 'float')}, {ex.get('block_dim', 'None')}"
        fname = f"launch_{n}"
    elif key.kind == "set_options":
        params = "options, module"
        body = "wp.set_module_options(options, module=module)"
        args = f"{ex['options']}, {ex['module']}"
        fname = f"configure_{n}"
    else:  # config
        name = ex["name"]
        params = "value"
        body = f"wp.config.{name} = value"
        args = ex["value"]
        fname = f"set_{name}_{n}"
    if form == "wrapper_func_1":
        b.add("H", "helpers", f"def {fname}({params}):\n    {body}\n")
        return [f"H::{fname}({args})"]
    if form == "wrapper_func_2":
        b.add("H", "helpers", f"def _{fname}({params}):\n    {body}\n\n\ndef {fname}({params}):\n"
                              f"    _{fname}({params})\n")
        return [f"H::{fname}({args})"]
    cls = f"Runner_{n}"
    b.add("H", "helpers", f"class {cls}:\n    def run(self, {params}):\n        {body}\n")
    return [f"H::{cls}().run({args})"]


# ---------------------------------------------------------------------------------------------------------
# the mechanisms


def launch_key(kernel: str, dtype: str = "float", block_dim: str | None = None, slot: str = "kernel") -> Key:
    parts = {"kernel": kernel, "dtype": dtype}
    if block_dim is not None:
        parts["block_dim"] = block_dim
    text = launch_text("{v}" if slot == "kernel" else kernel, "{v}" if slot == "dtype" else dtype,
                       "{v}" if slot == "block_dim" else block_dim)
    return Key("launch", text, slot, parts)


def base_launch(b: Builder, cr: Creator, c: str = "1.0", block_dim: str | None = None) -> list[str]:
    pre, expr = cr.obtain(c)
    return [*pre, launch_text(expr, block_dim=block_dim)]


class Gen:
    """One program's generation: the axes chosen, the builder, the intent."""

    def __init__(self, rng: random.Random, mech: str, variant: str, axes: dict[str, str]):
        self.rng = rng
        self.mech = mech
        self.variant = variant
        self.axes = dict(axes)
        self.lay = Layout(axes["layout"], axes["timing"])
        self.b = Builder(self.lay, rng)
        self.intent: dict[str, Any] = {"defect": MECHANISMS[mech][variant], "mechanism": mech}
        self.used = {"creation": False, "delivery": False}
        self.command: list[str] = []

    def mark(self, stmt: str, tag: str) -> str:
        lines = stmt.split("\n")
        lines[0] += f"  #@{tag}"
        return "\n".join(lines)

    def key_creator(self, kw: dict[str, str] | None = None, generic: bool | str = False,
                    param_module: tuple[str, str] | None = None) -> Creator:
        self.used["creation"] = True
        return Creator(self.b, self.axes["creation"], "K", kw, generic, param_module)

    def plain_creator(self, kw: dict[str, str] | None = None, generic: bool = False) -> Creator:
        return Creator(self.b, "decorator", "K", kw, generic)

    def deliver(self, key: Key, value: str, is_str: bool = False, is_int: bool = False, tag: str = "key") -> list[str]:
        self.used["delivery"] = True
        form = self.axes["delivery"]
        if not re.fullmatch(r"[KHUD]::\w+|-?[\d.]+|\"[^\"]*\"|wp\.\w+|True|False|None", value):
            # a value made at the use (a local, a factory call): forms that evaluate it at module scope would
            # move or break its creation, so they become the nearest form evaluated at the use
            form = AT_USE.get(form, form)
            self.axes["delivery"] = form
        stmts = deliver(self.b, form, key, value, is_str=is_str, is_int=is_int)
        stmts[-1] = self.mark(stmts[-1], tag)
        return stmts

    def early(self, code: str) -> None:
        """Before the kernel module is imported (conftest for the pytest files layout)."""
        if self.axes["timing"] == "pytest_files_conftest":
            self.b.extra_files.setdefault("tests/conftest.py", "import warp as wp\n")
            self.b.extra_files["tests/conftest.py"] += textwrap.dedent(code).strip("\n") + "\n"
        else:
            self.b.add("D", "early", code)

    # -- the mechanisms ---------------------------------------------------------------------------------
    def build(self) -> None:
        self.early("wp.config.enable_cpu_blocks = True")
        getattr(self, "m_" + self.mech.replace("-", "_"))()

    def m_CS_1(self) -> None:
        v = self.variant
        base = self.plain_creator()
        kw = {}
        if v == "own_module":
            kw = {"module": self.rng.choice(['"unique"', '"late_parts"'])}
        late = self.key_creator(kw)
        if late.form in DECORATOR_FORMS:
            late.inline = True  # a kernel made late: the decorated def runs in the run path
            if not kw and not self.lay.same("D", "K"):
                late.kw = {"module": f"\"{self._kernel_module_name()}\""}  # joins the kernels' module by name
        first = base_launch(self.b, base)
        if v == "before_load":
            pre, expr = late.obtain("2.0")
            made = self.mark(f"{self.b.fresh('kern')} = {expr}", "create")  # made before the first launch
            self.b.phase(*pre, made, *first)
            pre, expr = late.obtain("2.0")  # the same content again, after the load
            self.b.phase(*pre, *self.deliver(launch_key(expr), expr))
            return
        if v == "identical_redefined":
            pre, expr = late.obtain("2.0")
            made = self.mark(f"{self.b.fresh('kern')} = {expr}", "create")  # made before the first launch
            self.b.phase(*pre, made, *first)
        else:
            self.b.phase(*first)
        values = ["2.0", "3.0"] if v == "late_varying" else ["2.0"]
        if self.axes["timing"] == "loop_tuple" and len(values) > 1:
            pre, expr = late.obtain("c")
            body = pre + self.deliver(launch_key(expr), expr)
            self.b.phase("for c in (" + ", ".join(values) + "):\n" + indent("\n".join(body)))
            return
        stmts = []
        for c in values:
            pre, expr = late.obtain(c)
            if pre:
                pre[-1] = self.mark(pre[-1], "create")
            stmts += pre + self.deliver(launch_key(expr), expr)
        self.b.phase(*stmts)

    def m_CS_2(self) -> None:
        v = self.variant
        base = self.key_creator()
        self.b.need("D", "os")
        first = base_launch(self.b, base)
        if v in ("clear_on_path", "clear_behind_flag", "maintenance_only"):
            clear = "wp.clear_kernel_cache()"
            if v == "clear_on_path":
                stmt = self.mark(clear, "cache")
            elif v == "clear_behind_flag":
                self.b.need("D", "sys")
                stmt = f"if \"--rebuild\" in sys.argv:\n    {self.mark(clear, 'cache')}"
            else:
                self.b.add("D", "helpers", f"def clean_cache():\n    {self.mark(clear, 'cache')}\n")
                self.b.need("D", "sys")
                stmt = "if \"--clean\" in sys.argv:\n    clean_cache()"
            self.b.phase(*first)
            self.b.phase(stmt, *base_launch(self.b, base))
            return
        if v in ("cache_off", "cache_on"):
            value = "False" if v == "cache_off" else "True"
            key = Key("config", "wp.config.cache_kernels = {v}", "value", {"name": "cache_kernels", "value": value})
            self.b.phase(*self.deliver(key, value, tag="cache"), *first)
            return
        if v in ("temp_dir", "stable_dir"):
            if v == "temp_dir":
                self.b.need("D", "tempfile")
                value = "tempfile.mkdtemp(prefix=\"kc_\")"
            else:
                value = "os.path.join(os.path.dirname(os.path.abspath(__file__)), \".kernel_cache\")"
            key = Key("config", "wp.config.kernel_cache_dir = {v}", "value",
                      {"name": "kernel_cache_dir", "value": value})
            self.b.phase(*self.deliver(key, value, is_str=False, tag="cache"), *first)
            return
        # rmtree_at_exit
        self.b.need("D", "atexit")
        self.b.need("D", "shutil")
        self.b.phase(*first, self.mark("atexit.register(shutil.rmtree, wp.config.kernel_cache_dir, True)", "cache"))

    def _module_of_base(self, base_named: bool) -> tuple[str, str]:
        """(the module= text that names the base kernels' module from the driver, its kind)."""
        if base_named:
            return "\"sim\"", "str"
        if self.lay.same("D", "K"):
            return "__name__", "str"
        return "K::__name__", "str"

    def m_CS_3(self) -> None:
        v = self.variant
        named = self.rng.random() < 0.5
        base = self.key_creator({"module": "\"sim\""} if named else None)
        mod, _ = self._module_of_base(named)
        target = self.rng.choice([mod, f"wp.get_module({mod})"])
        value = "16" if v == "same_value" else "4"
        opts = "{\"max_unroll\": %s}"
        if v == "options_mutated_after_load":
            stmt = f"wp.get_module({mod}).options.update({{\"max_unroll\": 4}})"
            self.b.phase(*base_launch(self.b, base))
            self.b.phase(self.mark(stmt, "options"), *base_launch(self.b, base))
            return
        key = Key("set_options", "wp.set_module_options({{\"max_unroll\": {v}}}, module=" + target + ")", "value",
                  {"options": opts % value, "module": target})
        setter = self.deliver(key, value, is_int=True, tag="options")
        if v == "before_load":
            self.b.phase(*setter)
            self.b.phase(*base_launch(self.b, base))
        else:
            self.b.phase(*base_launch(self.b, base))
            self.b.phase(*setter, *base_launch(self.b, base))

    def m_CS_3b(self) -> None:
        v = self.variant
        snapshot = v.startswith("snapshot")
        base = self.plain_creator() if snapshot else self.key_creator()
        first = base_launch(self.b, base)
        if v == "helper_without_module" and self.lay.same("H", "K"):
            self.intent["defect"] = False  # the helper sits in the kernels' own file: that is its module
        if v in ("helper_without_module", "helper_with_module"):
            target = "" if v == "helper_without_module" else f", module=\"{self._kernel_module_name()}\""
            call = self.mark("wp.set_module_options({\"max_unroll\": 4}" + target + ")", "options")
            self.b.add("H", "helpers", f"def configure():\n    {call}\n")
            self.b.phase("H::configure()", *first)
            return
        if v in ("unknown_config", "known_config"):
            if v == "unknown_config":
                name = self.rng.choice(["fast_math", "verbose", "block_dim", "max_unrol", "enable_backwards",
                                        "kernel_cache"])
                value = {"fast_math": "True", "verbose": "True", "block_dim": "128", "max_unrol": "4",
                         "enable_backwards": "False", "kernel_cache": "\"/tmp\""}[name]
            else:
                name, value = self.rng.choice([("mode", "\"release\""), ("max_unroll", "16"),
                                               ("cache_kernels", "True")])
            key = Key("config", f"wp.config.{name} = {{v}}", "value", {"name": name, "value": value})
            stmts = self.deliver(key, value, is_int=value.isdigit(), tag="config")
            self.b.phase(*stmts, *first)
            return
        # snapshot option relative to the import of the kernel module
        name, value = self.rng.choice([("max_unroll", "4"), ("lineinfo", "True")])
        self._snapshot(name, value, after=(v == "snapshot_after_import"), first=first)

    def _kernel_module_name(self) -> str:
        k = self.lay.path["K"]
        if k in self.lay.modname:
            return self.lay.modname[k]
        if self.axes["timing"] in PYTEST_ONE_FILE:
            return "test_app"
        return "main" if self.axes["timing"] == "second_entry_point" else "__main__"

    def _snapshot(self, name: str, value: str, after: bool, first: list[str]) -> None:
        stmt = self.mark(f"wp.config.{name} = {value}", "config")
        if after:
            if self.axes["timing"] == "pytest_files_conftest":
                self.b.phase(stmt, *first)  # in a test, after the test modules (and the kernels) were imported
            else:
                self.b.add("D", "late", stmt)
                self.b.phase(*first)
        else:
            self.early(stmt)
            self.b.phase(*first)

    def m_CS_4(self) -> None:
        v = self.variant
        if v == "fragmented_files":
            self._fragmented_files()
            return
        creators = []
        for i in range(4):
            kw = {} if v == "shared_module" else {"module": f"\"part_{i}\""}
            creators.append(self.key_creator(kw) if i == 0 else Creator(self.b, self.axes["creation"], "K", kw))
        if v == "distinct_options":
            self.b.phase(*[f"wp.set_module_options({{\"max_unroll\": {2 + i}}}, module=\"part_{i}\")"
                           for i in range(4)])
        stmts = []
        for i, cr in enumerate(creators):
            pre, expr = cr.obtain(f"{i + 1}.0")
            stmts += pre + ([self.mark(launch_text(expr), "part")] if i == 0 else [launch_text(expr)])
        self.b.phase(*stmts)

    def _fragmented_files(self) -> None:
        """One kernel per file of the package, each in its file's own module (no module= anywhere)."""
        n_files = self.rng.choice((2, 3, 4))
        self.intent["defect"] = n_files >= 3  # the labeller's threshold (truth.FRAGMENTED_MIN)
        stmts = []
        for i in range(n_files):
            name = self.b.fresh("op")
            self.b.extra_files[f"pkg/{name}.py"] = "import warp as wp\n\n\n" + kernel_def(name, f"{i + 1}.0")
            self.b.need("D", f"pkg.{name}")
            launch = launch_text(f"pkg.{name}.{name}")
            stmts.append(self.mark(launch, "part") if i == 0 else launch)
        self.b.phase(*stmts)

    def m_CS_5(self) -> None:
        v = self.variant
        a, c = self.rng.sample(["32", "64", "128", "256"], 2)
        k1 = self.plain_creator()
        k2 = self.key_creator({"module": "\"isolated\""} if v == "isolated_module" else None)
        second = a if v == "same_block_dim" else c
        p1, e1 = k1.obtain("1.0")
        p2, e2 = k2.obtain("2.0")
        if self.axes["timing"] == "loop_tuple":
            self.b.phase(*p1, *p2, f"for kern, bd in (({e1}, {a}), ({e2}, {second})):\n"
                         + indent(self.mark(launch_text("kern", block_dim="bd"), "launch")))
            return
        self.b.phase(*p1, launch_text(e1, block_dim=a))
        self.b.phase(*p2, *self.deliver(launch_key(e2, block_dim=second, slot="block_dim"), second, is_int=True,
                                        tag="launch"))

    def m_CS_6(self) -> None:
        untyped = self.variant.endswith("_untyped")
        v = self.variant.removesuffix("_untyped")
        g = self.key_creator(generic="untyped" if untyped else True)
        second = "wp.float32" if v == "one_dtype" else "wp.float64"
        if v == "registered_up_front":
            pre, expr = g.obtain("1.0")
            form = self.rng.choice(["list", "dict"])
            regs = []
            for t in ("wp.float32", "wp.float64"):
                arg = f"[wp.array(dtype={t})]" if form == "list" else f"{{\"a\": wp.array(dtype={t})}}"
                regs.append(self.mark(f"wp.overload({expr}, {arg})", "overload"))
            self.b.phase(*pre, *regs)
        pre, expr = g.obtain("1.0")  # each phase gets the kernel itself (phases share no locals)
        if self.axes["timing"] == "loop_tuple":
            self.b.phase(*pre, f"for t in (wp.float32, {second}):\n" + indent(self.mark(launch_text(expr, "t"),
                                                                                           "launch")))
            return
        self.b.phase(*pre, launch_text(expr, dtype="wp.float32"))
        pre, expr = g.obtain("1.0")
        self.b.phase(*pre, *self.deliver(launch_key(expr, dtype=second, slot="dtype"), second, tag="launch"))

    def m_CS_9(self) -> None:
        v = self.variant
        form = self.axes["creation"]
        delivery = self.axes["delivery"]
        stmts: list[str] = []
        shared = self.plain_creator()
        last = base_launch(self.b, shared)  # the shared module's launch comes after the kernels are made
        if v == "shared_module":
            crs = [self.key_creator(), Creator(self.b, form, "K")]
            for i, cr in enumerate(crs):
                pre, expr = cr.obtain(f"{i + 2}.0")
                stmts += [*pre, launch_text(expr)]
            self.b.phase(*stmts, *last)
            return
        # the module value "unique" reaches the kernel's decorator through the delivery axis
        param = None
        if form in FACTORY_FORMS and delivery in PARAM_FORMS:
            param = (delivery, "\"unique\"")
            module_expr = "module"
            self.used["delivery"] = True
        else:
            # wp.kernel(module=...) of a later call is written where the kernel is obtained (the driver); the
            # specializations below make it in a factory of the kernel module instead
            later = form in ("wp_kernel_later", "kernel_opts_call") and v == "stable_unique"
            used_in = "D" if later else "K"
            module_expr = self._module_value('"unique"', delivery if delivery in MODULE_SCOPE_DELIVERY else "direct",
                                             used_in)
        if v == "stable_unique":
            crs = [self.key_creator({"module": module_expr} if param is None else None, param_module=param),
                   Creator(self.b, form, "K", {"module": module_expr} if param is None else None, param_module=param)]
            for i, cr in enumerate(crs):
                pre, expr = cr.obtain(f"{i + 2}.0")
                stmts += [*pre, launch_text(expr)]
        else:  # specializations: one factory, distinct values
            if form not in (*FACTORY_FORMS, "property", "cached_property", "descriptor", "self_none"):
                self.axes["creation"] = form = "factory"
            cr = self.key_creator({"module": module_expr} if param is None else None, param_module=param)
            for c in ("2.0", "3.0", "4.0"):
                pre, expr = cr.obtain(c)
                stmts += [*pre, launch_text(expr)]
        self.b.phase(*stmts, *last)

    def _module_value(self, value: str, form: str, used_in: str = "K") -> str:
        """``value`` delivered at the kernel module's scope; returns the expression for module=."""
        if form == "direct":
            return value
        self.used["delivery"] = True
        n = self.b.fresh("m")
        add = lambda code: self.b.add("K", "early", code)  # noqa: E731 - a local shorthand
        if form == "module_constant":
            add(f"MODULE_{n} = {value}")
            return f"K::MODULE_{n}"
        if form == "class_attr":
            add(f"class Defaults_{n}:\n    module = {value}\n")
            return f"K::Defaults_{n}.module"
        if form == "list_item":
            add(f"ITEMS_{n} = [{value}]")
            return f"K::ITEMS_{n}[0]"
        if form == "dict_literal":
            add(f"TABLE_{n} = {{\"module\": {value}}}")
            return f"K::TABLE_{n}[\"module\"]"
        if form == "dict_filled_later":
            add(f"TABLE_{n} = {{}}\nTABLE_{n}[\"module\"] = {value}")
            return f"K::TABLE_{n}[\"module\"]"
        if form == "runtime_key_table":
            self.b.need("K", "os")
            add(f"TABLE_{n} = {{\"default\": {value}, \"fast\": {value}}}")
            self.b.need(used_in, "os")
            return f"K::TABLE_{n}[os.environ.get(\"ORACLE_MODE\", \"default\")]"
        if form == "return_1":
            add(f"def get_{n}():\n    return {value}\n")
            return f"K::get_{n}()"
        if form == "return_2":
            add(f"def _get_{n}():\n    return {value}\n\n\ndef get_{n}():\n    return _get_{n}()\n")
            return f"K::get_{n}()"
        if form == "runtime_computed":
            self.b.need(used_in, "os")
            return f"os.environ.get(\"ORACLE_UNSET\", {value})"
        if form == "tuple_unpack":
            add(f"_, MODULE_{n} = (0, {value})")
            return f"K::MODULE_{n}"
        if form == "attr_self":
            add(f"class Holder_{n}:\n    def __init__(self, module):\n        self.module = module\n\n\n"
                f"HOLDER_{n} = Holder_{n}({value})")
            return f"K::HOLDER_{n}.module"
        if form == "enum_member":
            self.b.need("K", "enum")
            add(f"class Choice_{n}(enum.Enum):\n    MODULE = {value}\n")
            return f"K::Choice_{n}.MODULE.value"
        if form == "frozen_dataclass":
            self.b.need("K", "dataclasses")
            add(f"@dataclasses.dataclass(frozen=True)\nclass Params_{n}:\n    module: Any = {value}\n\n\n"
                f"PARAMS_{n} = Params_{n}()")
            return f"K::PARAMS_{n}.module"
        if form == "simple_namespace":
            self.b.need("K", "types")
            add(f"CONFIG_{n} = types.SimpleNamespace(module={value})")
            return f"K::CONFIG_{n}.module"
        if form == "global_setter":
            add(f"MODULE_{n} = None\n\n\ndef set_module_{n}(value):\n    global MODULE_{n}\n"
                f"    MODULE_{n} = value\n\n\nset_module_{n}({value})")
            return f"K::MODULE_{n}"
        if form == "dataclass_field":
            self.b.need("K", "dataclasses")
            add(f"@dataclasses.dataclass\nclass Settings_{n}:\n    module: Any = None\n\n\n"
                f"SETTINGS_{n} = Settings_{n}(module={value})")
            return f"K::SETTINGS_{n}.module"
        raise ValueError(form)  # pragma: no cover

    def m_CS_10(self) -> None:
        v = self.variant
        if v in ("backward_off_after_import", "backward_off_before_import"):
            base = self.plain_creator()  # a module-level kernel: its module exists from the import on
            self._snapshot("enable_backward", "False", after=(v == "backward_off_after_import"),
                           first=base_launch(self.b, base))
            return
        base = self.key_creator()
        if v in ("differentiated", "forward_entry_of_differentiated_library"):
            base.backward = "True"
        pre, expr = base.obtain("1.0")
        if v == "forward_entry_of_differentiated_library":
            self._training_entry_point(base)
        if v == "differentiated":
            self.b.phase(*pre, launch_text(expr), self.mark(launch_text(expr, adjoint=True), "adjoint"))
        else:
            self.b.phase(*pre, launch_text(expr), launch_text(expr))

    def _training_entry_point(self, base: Creator) -> None:
        """``train.py``: another entry point of the project that differentiates the library's kernel (a Tape);
        the program's command runs the forward-only one."""
        pre, expr = base.obtain("1.0")
        body = "\n".join([*pre, "a = wp.zeros(4, dtype=float, requires_grad=True)", "tape = wp.Tape()",
                          "with tape:", f"    wp.launch({expr}, dim=4, inputs=[a])",
                          "tape.backward(grads={a: wp.ones(4, dtype=float)})"])
        pkg_imports = {self.lay.alias[self.lay.path["K"]]}  # the library's kernels (a registry fills on import)
        text = self.b.resolve("train.py", f"def train():\n{indent(body)}\n", pkg_imports)
        head = ["import warp as wp"] + [f"import {m}" for m in ("functools", "importlib", "sys") if f"{m}." in text]
        head += [f"from pkg import {a}" for a in sorted(pkg_imports)]
        self.b.extra_files["train.py"] = ("\n".join(head) + "\n\n\n" + text
                                          + "\n\nif __name__ == \"__main__\":\n    train()\n")

    def m_CS_13(self) -> None:
        v = self.variant
        named = self.rng.random() < 0.5
        base = self.key_creator({"module": "\"sim\""} if named else None)
        name = "\"sim\"" if named else ("__name__" if self.lay.same("D", "K") else "K::__name__")
        if v == "force_load_all":
            stmt = "wp.force_load()"
        elif v == "force_load_modules":
            stmt = f"wp.force_load(modules=[wp.get_module({name})])"
        else:
            target = name if v == "load_correct_name" else (
                "\"sim_\"" if named else ("__name__ + \"_\"" if self.lay.same("D", "K") else "K::__name__ + \"_\""))
            call = self.mark(f"wp.load_module({target})", "preload")
            stmt = f"try:\n    {call}\nexcept RuntimeError:\n    pass"
            pre, expr = base.obtain("1.0")
            self.b.phase(*pre, f"{self.b.fresh('kern')} = {expr}", stmt)  # the kernel exists, then the preload
            self.b.phase(*base_launch(self.b, base))
            return
        pre, expr = base.obtain("1.0")
        self.b.phase(*pre, f"{self.b.fresh('kern')} = {expr}", self.mark(stmt, "preload"))
        self.b.phase(*base_launch(self.b, base))

    # -- timing and files -----------------------------------------------------------------------------
    def place(self) -> None:
        t = self.axes["timing"]
        phases = self.b.phases
        body = lambda ph, n=4: indent("\n".join(ph), n)  # noqa: E731
        allp = [s for ph in phases for s in ph]
        if t in ("same_function", "loop_tuple", "second_entry_point"):
            if t == "loop_tuple" and len(phases) > 1 and not any("for " in s for s in allp):
                fns = []
                for i, ph in enumerate(phases, 1):
                    self.b.add("D", "phases", f"def phase_{i}():\n{body(ph)}\n")
                    fns.append(f"phase_{i}")
                self.b.add("D", "phases", "def main():\n    for step in (" + ", ".join(fns) + ",):\n        step()\n")
            else:
                self.b.add("D", "phases", f"def main():\n{body(allp)}\n")
            self.b.add("D", "entry", "if __name__ == \"__main__\":\n    main()")
        elif t == "caller_callee":
            for i, ph in enumerate(phases, 1):
                self.b.add("D", "phases", f"def phase_{i}():\n{body(ph)}\n")
            calls = "\n".join(f"    phase_{i}()" for i in range(1, len(phases) + 1))
            self.b.add("D", "phases", f"def main():\n{calls}\n")
            self.b.add("D", "entry", "if __name__ == \"__main__\":\n    main()")
        elif t == "init_then_method":
            rest = [s for ph in phases[1:] for s in ph] or ["pass"]
            self.b.add("D", "phases", f"class App:\n    def __init__(self):\n{body(phases[0], 8)}\n\n"
                                      f"    def run(self):\n{body(rest, 8)}\n")
            self.b.add("D", "entry", "if __name__ == \"__main__\":\n    App().run()")
        elif t == "import_time":
            self.b.add("D", "phases", "\n".join(phases[0]))
            rest = [s for ph in phases[1:] for s in ph] or ["pass"]
            self.b.add("D", "phases", f"def main():\n{body(rest)}\n")
            self.b.add("D", "entry", "if __name__ == \"__main__\":\n    main()")
        elif t == "main_guard":
            self.b.add("D", "entry", f"if __name__ == \"__main__\":\n{body(allp)}")
        elif t == "pytest_one_file":
            for i, ph in enumerate(phases, 1):
                self.b.add("D", "phases", f"def test_{i}_step():\n{body(ph)}\n")
        elif t == "pytest_files_conftest":
            self.b.add("D", "phases", f"def test_setup():\n{body(phases[0])}\n")
            rest = [s for ph in phases[1:] for s in ph] or ["pass"]
            self.second_test = f"def test_run():\n{body(rest)}\n"
        elif t == "pytest_unittest_class":  # the first phase in setUpClass, the others as test methods (by name)
            self.b.need("D", "unittest")
            tests = "".join(f"\n    def test_{i}_step(self):\n{body(ph, 8)}\n" for i, ph in enumerate(phases[1:], 2))
            if not tests:
                tests = "\n    def test_2_step(self):\n        pass\n"
            self.b.add("D", "phases", f"class TestApp(unittest.TestCase):\n    @classmethod\n"
                                      f"    def setUpClass(cls):\n{body(phases[0], 8)}\n{tests}")
        elif t == "pytest_fixture":  # the first phase in a fixture the tests request, at the scope drawn
            self.b.need("D", "pytest")
            scope = self.rng.choice(("function", "module", "session"))
            self.b.add("D", "phases", f"@pytest.fixture(scope=\"{scope}\")\ndef prepared():\n{body(phases[0])}\n"
                                      f"    yield\n")
            for i, ph in enumerate(phases[1:] or [["pass"]], 2):
                self.b.add("D", "phases", f"def test_{i}_step(prepared):\n{body(ph)}\n")
        elif t == "pytest_parametrize":  # one test, its parameters the phases (run in the order listed)
            self.b.need("D", "pytest")
            for i, ph in enumerate(phases, 1):
                self.b.add("D", "phases", f"def phase_{i}():\n{body(ph)}\n")
            params = ", ".join(f"phase_{i}" for i in range(1, len(phases) + 1))
            self.b.add("D", "phases", f"@pytest.mark.parametrize(\"phase\", [{params}])\ndef test_phase(phase):\n"
                                      f"    phase()\n")
        elif t == "argparse_main":  # the entry point parses its arguments and hands them to main
            self.b.need("D", "argparse")
            for i, ph in enumerate(phases, 1):
                self.b.add("D", "phases", f"def phase_{i}():\n{body(ph)}\n")
            calls = "\n".join(f"    phase_{i}()" for i in range(1, len(phases) + 1))
            self.b.add("D", "phases", f"def main(args):\n{calls}\n    if args.verbose:\n        print(\"done\")\n")
            self.b.add("D", "entry", "if __name__ == \"__main__\":\n    parser = argparse.ArgumentParser()\n"
                                     "    parser.add_argument(\"--verbose\", action=\"store_true\")\n"
                                     "    main(parser.parse_args())")
        elif t == "callback_registry":  # a decorator lists the steps; main runs the list in order
            self.b.add("D", "phases", "STEPS = []\n\n\ndef step(f):\n    STEPS.append(f)\n    return f\n")
            for i, ph in enumerate(phases, 1):
                self.b.add("D", "phases", f"@step\ndef phase_{i}():\n{body(ph)}\n")
            self.b.add("D", "phases", "def main():\n    for run_step in STEPS:\n        run_step()\n")
            self.b.add("D", "entry", "if __name__ == \"__main__\":\n    main()")
        elif t == "executor_submit":  # each step handed to a one-thread executor, waited for before the next
            self.b.need("D", "concurrent.futures")
            for i, ph in enumerate(phases, 1):
                self.b.add("D", "phases", f"def phase_{i}():\n{body(ph)}\n")
            calls = "\n".join(f"        pool.submit(phase_{i}).result()" for i in range(1, len(phases) + 1))
            self.b.add("D", "phases", "def main():\n"
                                      "    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:\n"
                                      f"{calls}\n")
            self.b.add("D", "entry", "if __name__ == \"__main__\":\n    main()")
        else:  # pragma: no cover
            raise ValueError(t)
        if t.startswith("pytest"):
            self.command = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
        elif t == "second_entry_point":
            self.command = ["run_job.py"]
        else:
            self.command = ["main.py"]

    def render(self) -> tuple[dict[str, str], dict[str, list[list]]]:
        files: dict[str, str] = {}
        for path, secs in self.b.sections.items():
            files[path] = self.b.render_file(path, secs, self.b.imports.get(path, set()))
        t = self.axes["timing"]
        if t == "pytest_files_conftest":
            d = self.lay.path["D"]
            secs = {s: list(v) for s, v in self.b.sections[d].items()}
            secs["phases"] = [self.second_test]
            secs["early"] = []
            files["tests/test_2_run.py"] = self.b.render_file("tests/test_2_run.py", secs, self.b.imports.get(d, set()))
        if t.startswith("pytest"):
            files["pytest.ini"] = "[pytest]\npythonpath = .\ntestpaths = tests\n"
        if t == "second_entry_point":
            files["run_job.py"] = "import main\n\nif __name__ == \"__main__\":\n    main.main()\n"
        files.update(self.b.extra_files)
        if any(p.startswith("pkg/") for p in files):
            files["pkg/__init__.py"] = ""
        marks: dict[str, list[list]] = {}
        out = {}
        for path, text in sorted(files.items()):
            lines = text.split("\n")
            for i, line in enumerate(lines):
                m = MARK.search(line)
                if m:
                    marks.setdefault(m.group(1), []).append([path, i + 1])
                    lines[i] = line[: m.start()]
            out[path] = "\n".join(lines)
        return out, marks


# ---------------------------------------------------------------------------------------------------------
# drawing programs


# variants whose program is a package (a library beside its entry points, or several kernel files)
PACKAGE_VARIANTS = ("fragmented_files", "forward_entry_of_differentiated_library")


def _draw_axes(rng: random.Random, depth: int, catalogue_axes: dict[str, tuple[str, ...]] = AXES,
               variant: str = "") -> dict[str, str]:
    names = list(catalogue_axes)
    chosen = set(rng.sample(names, depth))
    axes = {n: (rng.choice(catalogue_axes[n][1:]) if n in chosen else catalogue_axes[n][0]) for n in names}
    needs_package = axes["timing"] == "pytest_files_conftest" or variant in PACKAGE_VARIANTS
    if needs_package and axes["layout"] == "single":
        axes["layout"] = rng.choice(LAYOUT[1:])
    return axes


def generate(seed: int, index: int, max_depth: int = 4, version: int = GENERATOR_VERSION) -> Program:
    """The program ``index`` of ``seed`` drawn from generator ``version``'s catalogue (axes.catalogue):
    deterministic, whatever else was drawn."""
    mechanisms, catalogue_axes = catalogue(version)
    rng = random.Random(f"warplint-oracle:{seed}:{index}")
    mech = rng.choice(sorted(mechanisms))
    variant = rng.choice(sorted(mechanisms[mech]))
    depth = rng.randint(0, max_depth)
    for _attempt in range(6):
        # an axis drawn non-trivial that this mechanism's variant has no use for is drawn again
        axes = _draw_axes(rng, depth, catalogue_axes, variant)
        g = Gen(rng, mech, variant, axes)
        g.build()
        unused = [a for a in ("creation", "delivery") if axes[a] != catalogue_axes[a][0] and not g.used[a]]
        if not unused:
            break
    g.place()
    files, marks = g.render()
    # the axes a mechanism did not use stay at their trivial value in the record (the matrix counts what ran)
    eff = dict(g.axes)
    for a in ("creation", "delivery"):
        if not g.used[a]:
            eff[a] = "-"
    eff_depth = sum(1 for a in AXES if eff[a] not in ("-", AXES[a][0]))
    if eff["layout"] != axes["layout"]:
        eff["layout"] = axes["layout"]
    return Program(seed=seed, index=index, depth=eff_depth, mechanism=mech, variant=variant, axes=eff,
                   files=files, command=g.command, intent=g.intent, marks=marks)


__all__ = ["Program", "generate", "program_digest", "CREATION", "DELIVERY", "TIMING", "LAYOUT"]
