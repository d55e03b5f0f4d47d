"""Warp's own examples as held-out real programs: static findings against what the run showed (issue 25, item 5).

    python -m benchmarks.oracle.warp_examples            # run what is not cached yet, score, write the JSON
    python -m benchmarks.oracle.warp_examples --rescore  # no Warp run: score the cached runs with this warplint
    python -m benchmarks.oracle.warp_examples --list     # the plan: command line or skip reason per example

What it does, per example of the installed ``warp/examples/`` (``example_*.py``; the ``benchmarks/`` there are
listed as skipped):

1. **Plan** from the example's own ``argparse`` options (read with ``ast``, nothing imported) and from Warp's own
   test registration of it (``warp/tests/test_examples.py``, ``warp/tests/fem/test_fem_examples.py``: the
   options Warp's CI runs it with on CPU): ``--device cpu``, ``--headless``, ``--stage-path None`` (no USD
   output), small step counts (``--num-frames``/``--num_frames``, ``--num-steps``, ``--train-iters`` ...).
   Skipped, with the reason: an example that needs a package not installed (a module-level import, or Warp's
   registration says ``usd_required``/``torch_required``/...), one that hard-codes ``device="cuda"`` with no
   option to change it, one that can only write USD output.
2. **Copy** it out of ``site-packages`` into its own project directory under ``.cache/oracle/warp_examples/``
   (with the example helpers it imports from ``warp.examples.<pkg>``, the import line rewritten in place so
   every line keeps its number). Why a copy: the recorder takes every frame under Warp's package directory for
   Warp's own code (``_recorder.Recorder.is_internal``), so an example run where it is installed has no user
   call site at all and no finding could be matched to it. The copy runs as a script: its Warp module is
   ``__main__``, as under ``python -m warp.examples...``.
3. **Record** it with ``warplint.confirm.run_confirm`` (the recorder of ``warplint --confirm``: private
   ``WARP_CACHE_PATH``/``CUDA_CACHE_PATH``, cold then warm), line probes off, so the recording does not depend
   on the findings. The two passes are cached by Warp version + digest of the copied sources and the command
   (``.cache/oracle/warp_examples/truth/``).
4. **Score**: the default rules on the copied files (``warplint --format json``), judged against the recorded
   passes by ``warplint.confirm.analyze``. A static finding is *confirmed* (true positive), *not reproduced*
   (false positive, unless its mechanism only shows on CUDA: CS-5, CS-7, CS-13 are counted apart), *not
   exercised* or *inconclusive* (left out). Runtime-only findings (WC9xx) whose user line is in the example's
   files are misses; those that point into Warp's own library (a ``warp.fem`` kernel rebuilt, say) are out of
   scope and only counted: the example did not write that code.

``markdown_section()`` renders ``benchmarks/oracle/data/warp_examples.json`` (written by this script) for
``docs/accuracy.md``.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import datetime
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = os.path.join(REPO, ".cache", "oracle", "warp_examples")
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "warp_examples.json")
COMMAND = "python -m benchmarks.oracle.warp_examples"
FORMAT = 1  # of the cached truth and of the JSON
PLACEHOLDER = "@@PROJECT@@"

# mechanisms whose effect needs CUDA (mechanisms.md: "On CPU every launch uses block_dim 1; CS-5, CS-7 and
# CS-13 are CUDA-only effects"): a CPU run cannot reproduce them, so they count neither way
CUDA_ONLY = {"CS-5", "CS-7", "CS-13"}
# step-count options, capped when Warp's own CPU test registration does not give a value
STEP_CAPS = {
    "num_frames": 10, "num_steps": 10, "steps": 10, "frames": 10, "train_iters": 3, "num_iters": 3,
    "max_evals": 3, "iterations": 3, "num_iterations": 3,
}
# packages whose absence Warp's test registration names with a key
REQUIRED_KEYS = {"usd_required": "pxr", "torch_required": "torch", "pillow_required": "PIL", "nlopt_required": "nlopt"}
PIP_NAME = {"pxr": "usd-core", "PIL": "pillow"}

# runtime-only findings of a defect (a rebuild, an option lost, a cache thrown away) vs. of a measured cost
# (backward built and unused, one-kernel modules, serial or per-block_dim builds, link time): both are misses,
# the totals give the recall over each
DEFECT_CODES = {"WC901", "WC902", "WC903", "WC904", "WC908"}
DEFECT_MECHANISMS = {"CS-1", "CS-2", "CS-3", "CS-3B", "CS-6"}  # static findings on the same kinds of defect

CONFIRMED, NOT_REPRODUCED, NOT_EXERCISED, INCONCLUSIVE = "confirmed", "not-reproduced", "not-exercised", "inconclusive"


# -- where Warp is ----------------------------------------------------------------------------------------

def warp_dir() -> str:
    """The installed ``warp`` package directory, found without importing it."""
    spec = importlib.util.find_spec("warp")
    if spec is None or not spec.origin:
        raise SystemExit("warp-lang is not installed in this environment")
    return os.path.dirname(spec.origin)


def warp_version() -> str:
    return importlib.metadata.version("warp-lang")


def _installed(top: str) -> bool:
    if top in sys.builtin_module_names or top in getattr(sys, "stdlib_module_names", ()):
        return True
    try:
        return importlib.util.find_spec(top) is not None  # a top-level name: nothing is imported
    except (ImportError, ValueError):
        return False


# -- the plan ---------------------------------------------------------------------------------------------

@dataclass
class Option:
    flag: str  # as the example spells it: "--num-frames"
    default: Any = None
    store_true: bool = False
    none_lambda: bool = False  # type=lambda x: None if x == "None" else ...


@dataclass
class Plan:
    id: str  # "core.example_wave"
    source: str  # the installed file
    args: list[str] = field(default_factory=list)  # after the script path
    skip: str | None = None
    notes: list[str] = field(default_factory=list)
    warp_test: str | None = None  # "cpu" / "cuda only" / None (Warp's own tests do not run it)
    helpers: dict[str, str] = field(default_factory=dict)  # copied name -> installed file

    @property
    def file_name(self) -> str:
        return os.path.basename(self.source)


def _literal(node: ast.AST | None) -> Any:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def argparse_options(tree: ast.Module) -> dict[str, Option]:
    """The options of every ``add_argument`` call (``--num-frames``, ``-N``), keyed by the name with ``_`` for
    ``-`` (``num_frames``, ``N``); the long spelling is the one passed."""
    out: dict[str, Option] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            continue
        flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        long = sorted((f for f in flags if f.startswith("-")), key=lambda f: not f.startswith("--"))
        if not long:
            continue
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        typ = kw.get("type")
        opt = Option(
            flag=long[0],
            default=_literal(kw.get("default")),
            store_true=_literal(kw.get("action")) == "store_true",
            none_lambda=isinstance(typ, ast.Lambda) and "None" in ast.unparse(typ),
        )
        for f in long:
            out[f.lstrip("-").replace("-", "_")] = opt
    return out


def warp_test_registrations(wdir: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """Warp's own registration of each example in its test suite: name -> (devices, CPU options)."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for rel in ("tests/test_examples.py", "tests/fem/test_fem_examples.py"):
        path = os.path.join(wdir, rel)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("add_example_test", "add_fem_example_test")):
                continue
            kw = {k.arg: k.value for k in node.keywords if k.arg}
            name = _literal(kw.get("name"))
            if not isinstance(name, str):
                continue
            dev = kw.get("devices")
            dev_src = ast.unparse(dev) if dev is not None else "None"
            devices = "cuda only" if "cuda" in dev_src else "cpu"
            opts = dict(_literal(kw.get("test_options")) or {})
            opts.update(_literal(kw.get("test_options_cpu")) or {})
            # the last registration wins: core.example_raymarch is registered for Windows first, then the rest
            out[name] = (devices, opts)
    return out


def _module_level_imports(tree: ast.Module) -> list[str]:
    """Top-level names imported whenever the example runs as a script: at module level and at the top of its
    ``__main__`` block. Imports under another condition (``if not args.headless: import matplotlib``), guarded
    by ``try`` or inside functions are left out: if one is needed after all, the run fails and says so."""
    names: list[str] = []

    def visit(body: Sequence[ast.stmt], top: bool) -> None:
        for st in body:
            if isinstance(st, ast.Import):
                names.extend(a.name.split(".")[0] for a in st.names)
            elif isinstance(st, ast.ImportFrom) and st.module and not st.level:
                names.append(st.module.split(".")[0])
            elif isinstance(st, ast.If) and top and "__main__" in ast.unparse(st.test):
                visit(st.body, False)
            elif isinstance(st, ast.With):
                visit(st.body, top)

    visit(tree.body, True)
    return names


_HELPER_IMPORT = re.compile(
    r"^(?P<indent>\s*)(?:import\s+warp\.examples\.(?P<pkg1>\w+)\.(?P<mod1>\w+)\s+as\s+(?P<as1>\w+)"
    r"|from\s+warp\.examples\.(?P<pkg2>\w+)\s+import\s+(?P<mod2>\w+)\s+as\s+(?P<as2>\w+))\s*$"
)


def rewrite_helper_imports(text: str) -> tuple[str, list[tuple[str, str]]]:
    """``import warp.examples.fem.utils as u`` -> ``import utils as u`` (the helper copied beside the example),
    one line for one line. Returns the new text and the (package, module) helpers named."""
    helpers: list[tuple[str, str]] = []
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        m = _HELPER_IMPORT.match(line.rstrip("\r\n"))
        if not m:
            continue
        pkg, mod, alias = (m["pkg1"], m["mod1"], m["as1"]) if m["pkg1"] else (m["pkg2"], m["mod2"], m["as2"])
        end = line[len(line.rstrip("\r\n")):]
        lines[i] = f"{m['indent']}import {mod} as {alias}{end}"
        helpers.append((pkg, mod))
    return "".join(lines), helpers


def _main_block(tree: ast.Module) -> ast.If | None:
    for st in tree.body:
        if isinstance(st, ast.If) and "__main__" in ast.unparse(st.test):
            return st
    return None


def plan_example(wdir: str, rel: str, registrations: dict[str, tuple[str, dict[str, Any]]]) -> Plan:
    """What to run for ``rel`` (``core/example_wave.py``) on CPU, or why not."""
    source = os.path.join(wdir, "examples", rel)
    ex_id = rel[:-3].replace("/", ".")
    plan = Plan(id=ex_id, source=source)
    if rel.startswith("benchmarks/"):
        plan.skip = ("a benchmark, not an example: asv classes or timing loops with no --device or step-count "
                     "option, several need other frameworks")
        return plan
    if rel.startswith("distributed/"):
        plan.skip = "multi-process / multi-GPU (MPI, NCCL or NVSHMEM)"
        return plan
    with open(source, encoding="utf-8") as fh:
        text = fh.read()
    tree = ast.parse(text)
    main = _main_block(tree)
    if main is None:
        plan.skip = "no `if __name__ == \"__main__\":` block: not a program"
        return plan
    missing = sorted({n for n in _module_level_imports(tree) if not _installed(n)})
    if missing:
        plan.skip = "needs " + ", ".join(PIP_NAME.get(n, n) for n in missing) + " (not installed)"
        return plan
    opts = argparse_options(tree)
    reg = registrations.get(ex_id)
    if reg is None and "OpenGLRenderer" in text and "headless" not in opts:
        plan.skip = "opens an OpenGL window, no --headless option (Warp's own tests leave it out too)"
        return plan
    reg_opts: dict[str, Any] = {}
    if reg is not None:
        plan.warp_test = reg[0]
        reg_opts = dict(reg[1])
    for key, top in REQUIRED_KEYS.items():
        if reg_opts.pop(key, False) and not _installed(top):
            plan.skip = f"Warp's own test of it requires {PIP_NAME.get(top, top)} (not installed)"
            return plan
    reg_opts.pop("test_timeout", None)
    if "device" not in opts:
        if re.search(r"device\s*=\s*[\"']cuda", ast.unparse(main)):
            plan.skip = 'runs on device="cuda", hard-coded in its `__main__` block (no --device option)'
            return plan
        plan.notes.append("no --device option: Warp's default device (the CPU here)")
    args: list[str] = []
    given: set[str] = set()

    def put(name: str, value: Any) -> None:
        opt = opts.get(name)
        if opt is None or name in given:
            return
        given.add(name)
        if opt.store_true:
            if value:
                args.append(opt.flag)
        else:
            args.extend([opt.flag, str(value)])

    if "device" in opts:
        put("device", "cpu")
    stage = reg_opts.pop("stage_path", "None")
    if "stage_path" in opts:
        sp = opts["stage_path"]
        if sp.none_lambda:
            put("stage_path", "None")
        elif sp.default is not None and stage is not None:
            plan.skip = "writes USD output with no way to turn it off (usd-core not installed)"
            return plan
    if "headless" in opts:
        put("headless", True)
    cpu_registered = plan.warp_test == "cpu"
    for name, given_value in reg_opts.items():
        if name == "headless":
            continue
        cap = STEP_CAPS.get(name)
        capped = cap is not None and not cpu_registered and isinstance(given_value, int)
        put(name, min(given_value, cap) if capped and cap is not None else given_value)
    for name, cap in STEP_CAPS.items():
        opt = opts.get(name)
        if opt is not None and name not in given and isinstance(opt.default, int) and opt.default > cap:
            put(name, cap)
    plan.args = args
    plan.helpers = {}
    _, helpers = rewrite_helper_imports(text)
    for pkg, mod in helpers:
        plan.helpers[f"{mod}.py"] = os.path.join(wdir, "examples", pkg, f"{mod}.py")
    if helpers:
        plan.notes.append("with " + ", ".join(f"{m}.py" for _, m in helpers) + " (its import rewritten in place)")
    return plan


def discover(wdir: str) -> list[str]:
    """``core/example_wave.py`` ... for every example and benchmark program under ``warp/examples``."""
    root = os.path.join(wdir, "examples")
    out = []
    for directory, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py") and name.startswith(("example_", "benchmark_")):
                out.append(os.path.relpath(os.path.join(directory, name), root).replace(os.sep, "/"))
    return sorted(out)


# -- the project copy -------------------------------------------------------------------------------------

def project_files(plan: Plan) -> dict[str, str]:
    """Copied file name -> text (the example, then its helpers), imports of helpers rewritten."""
    files: dict[str, str] = {}
    todo = [(plan.file_name, plan.source), *sorted(plan.helpers.items())]
    while todo:
        name, src = todo.pop(0)
        if name in files:
            continue
        with open(src, encoding="utf-8") as fh:
            text, helpers = rewrite_helper_imports(fh.read())
        files[name] = text
        for pkg, mod in helpers:
            todo.append((f"{mod}.py", os.path.join(os.path.dirname(os.path.dirname(src)), pkg, f"{mod}.py")))
    return files


def digest(plan: Plan, files: dict[str, str]) -> str:
    h = hashlib.sha256()
    h.update(f"format {FORMAT}\0{sys.version_info[:2]}\0".encode())
    h.update(json.dumps(plan.args).encode() + b"\0")
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    return h.hexdigest()[:16]


def project_dir(plan: Plan, key: str) -> str:
    return os.path.join(CACHE, "projects", f"{plan.id}-{key}")


def materialize(plan: Plan, files: dict[str, str], key: str) -> str:
    """Write the copy (idempotent): the example, its helpers, and an empty ``[tool.warplint]`` so the
    repository's configuration does not reach it."""
    root = project_dir(plan, key)
    os.makedirs(root, exist_ok=True)
    for name, text in {**files, "pyproject.toml": "[tool.warplint]\n"}.items():
        path = os.path.join(root, name)
        old = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                old = fh.read()
        if old != text:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
    return root


# -- recording (the truth) --------------------------------------------------------------------------------

def truth_path(plan: Plan, key: str) -> str:
    return os.path.join(CACHE, "truth", warp_version(), f"{plan.id}-{key}.json")


def _recorder_digest() -> str:
    from warplint.confirm import runner

    with open(runner.RECORDER_SOURCE, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()[:16]


def record(plan: Plan, root: str, timeout: float, echo: bool = False) -> dict[str, Any]:
    """Run the copy cold and warm under ``--confirm``'s recorder; the passes as JSON, paths made relative."""
    from warplint.confirm import run_confirm

    command = [sys.executable, os.path.join(root, plan.file_name), *plan.args]
    t = time.monotonic()
    result = run_confirm([], command, cwd=root, timeout=timeout, warm=True, line_probes="off",
                         echo=(lambda line: print("    | " + line, file=sys.stderr)) if echo else None)
    cold, warm = result.passes if result.passes else (None, None)
    passes = {label: _pass_json(p) for label, p in (("cold", cold), ("warm", warm)) if p is not None}
    truth = {
        "format": FORMAT,
        "example": plan.id,
        "warp_version": warp_version(),
        "python": ".".join(map(str, sys.version_info[:3])),
        "recorder": _recorder_digest(),
        "recorded": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "args": list(plan.args),
        "timeout_s": timeout,
        "elapsed_s": round(time.monotonic() - t, 1),
        "failed": result.failed,
        "last_output": list(result.last_output),
        "passes": passes,
    }
    text = json.dumps(truth, default=repr).replace(json.dumps(root)[1:-1], PLACEHOLDER)
    return dict(json.loads(text))


def _pass_json(p: Any) -> dict[str, Any]:
    out = dataclasses.asdict(p)
    out.pop("events_text", None)  # the raw log; `events` holds the same records parsed
    out["events"] = [{k: v for k, v in e.items() if not k.startswith("_")} for e in out.get("events") or []]
    return out


def _pass_of(data: dict[str, Any] | None) -> Any:
    from warplint.confirm.runner import PassResult

    if data is None:
        return None
    names = {f.name for f in dataclasses.fields(PassResult)}
    fields = {k: v for k, v in data.items() if k in names}
    # keys with a leading "_" are what RunData.from_events derives (and adds in place): derived again here
    fields["events"] = [{k: v for k, v in e.items() if not k.startswith("_")} for e in data.get("events") or []]
    return PassResult(**fields)


def load_truth(plan: Plan, key: str, root: str) -> dict[str, Any] | None:
    path = truth_path(plan, key)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    data = json.loads(text.replace(PLACEHOLDER, json.dumps(root)[1:-1]))
    return data if data.get("format") == FORMAT else None


def save_truth(plan: Plan, key: str, truth: dict[str, Any]) -> None:
    path = truth_path(plan, key)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(truth, fh)
    os.replace(path + ".tmp", path)


# -- static findings --------------------------------------------------------------------------------------

def lint(root: str, files: Sequence[str]) -> list[Any]:
    """The default rules on the copied files, through warplint's stable JSON output, as Diagnostics."""
    from warplint.diagnostic import Diagnostic, Related, Span

    proc = subprocess.run(
        [sys.executable, "-m", "warplint", "--format", "json", "--no-cache", "--exit-zero", *files],
        cwd=root, capture_output=True, text=True, timeout=600, check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"warplint failed in {root}: {proc.stderr.strip()[-500:]}")
    out = []
    for o in json.loads(proc.stdout or "[]"):
        related = tuple(
            Related(r["path"], Span(r["line"], r["column"] - 1, r["end_line"], r["end_column"] - 1), r["message"])
            for r in o.get("related") or ()
        )
        out.append(Diagnostic(
            path=o["path"], span=Span(o["line"], o["column"] - 1, o["end_line"], o["end_column"] - 1),
            code=o["code"], name=o["name"], mechanism=o["mechanism"], message=o["message"],
            confidence=o["confidence"], data=dict(o.get("data") or {}), related=related,
        ))
    return out


# -- scoring ----------------------------------------------------------------------------------------------

def bucket(verdict: str | None, mechanism: str | None, instantiated: bool = True) -> str:
    """How a judged static finding counts: ``tp``, ``fp``, ``cuda-only`` (not reproducible on CPU),
    ``not-exercised`` or ``inconclusive``. ``instantiated`` is False for a CS-6 finding whose generic kernel
    the run never instantiated (no overload, no launch): the judge says *not reproduced* there because the
    kernel's definition ran at import, but the path the finding is about (a new instance) never did."""
    if verdict == CONFIRMED:
        return "tp"
    if verdict == NOT_REPRODUCED and not instantiated and (mechanism or "").upper() == "CS-6":
        return "not-exercised"
    if verdict == NOT_REPRODUCED:
        return "cuda-only" if (mechanism or "").upper() in CUDA_ONLY else "fp"
    if verdict == NOT_EXERCISED:
        return "not-exercised"
    return "inconclusive"


def in_project(path: str, root: str) -> bool:
    full = path if os.path.isabs(path) else os.path.join(root, path)
    rel = os.path.relpath(os.path.realpath(full), os.path.realpath(root))
    return not rel.startswith("..")


def score(diagnostics: list[Any], truth: dict[str, Any], root: str) -> dict[str, Any]:
    """Judge ``diagnostics`` against the recorded passes and count. Pure over its inputs: no Warp run."""
    from warplint.confirm import analyze

    cold = _pass_of(truth["passes"].get("cold"))
    warm = _pass_of(truth["passes"].get("warm"))
    result = analyze(diagnostics, cold, warm, cwd=root, command=[], failed=truth.get("failed"))
    instantiated = {e.get("key") for e in (cold.events if cold else []) if e.get("ev") == "overload"}
    instantiated |= {e.get("kernel") for e in (cold.events if cold else []) if e.get("ev") == "topology"}
    static = []
    counts = dict.fromkeys(("tp", "fp", "cuda-only", "not-exercised", "inconclusive"), 0)
    for d in result.diagnostics:
        c = d.confirm or {}
        kernel = (d.data or {}).get("kernel")
        inst = not isinstance(kernel, str) or kernel in instantiated
        b = bucket(c.get("verdict"), d.mechanism, inst)
        counts[b] += 1
        static.append({"code": d.code, "path": d.path, "line": d.span.line, "mechanism": d.mechanism,
                       "kernel": kernel, "instantiated": inst, "verdict": c.get("verdict"), "bucket": b,
                       "evidence": _clip(c.get("evidence")), "cost_ms": c.get("cost_ms")})
    misses: list[dict[str, Any]] = []
    library: list[dict[str, Any]] = []
    owners = _module_owners(cold.events if cold else [], root)
    for d in result.runtime_findings:
        mods = _modules_of(d.data or {})
        item = {"code": d.code, "name": d.name, "path": d.path, "line": d.span.line, "mechanism": d.mechanism,
                "kind": "defect" if d.code in DEFECT_CODES else "cost",
                # whose Warp module moved: the example's own, or Warp's (warp.sparse, warp.fem) through a call
                "modules": "example" if any(owners.get(m) == "example" for m in mods) else "warp",
                "message": _clip(d.message), "cost_ms": (d.confirm or {}).get("cost_ms")}
        (misses if in_project(d.path, root) else library).append(item)
    s = result.summary
    return {
        "static": static,
        "counts": counts,
        "misses": misses,
        "out_of_scope": library,
        "run": {
            "cold_wall_s": s.get("cold_wall_s"), "warm_wall_s": s.get("warm_wall_s"),
            "compiled_identities": s.get("compiled_identities"), "identities": s.get("identities"),
            "warm_compiled_identities": s.get("warm_compiled_identities"), "rebuilds": s.get("rebuilds"),
            "module_time_ms": s.get("module_time_ms"), "recorder_ok": s.get("recorder_ok"),
            "recorder_errors": s.get("recorder_errors"),
            "modules": sorted({str(m.get("module")) for m in s.get("modules") or []}),
        },
    }


def _clip(text: str | None, n: int = 400) -> str | None:
    return text if text is None or len(text) <= n else text[: n - 3] + "..."


def _modules_of(data: dict[str, Any]) -> list[str]:
    mods = data.get("modules", data.get("module"))
    if isinstance(mods, str) and mods.startswith("["):
        mods = _literal(ast.parse(mods, mode="eval").body)
    if isinstance(mods, str):
        return [mods]
    return [str(m) for m in mods or ()]


def _module_owners(events: list[dict[str, Any]], root: str) -> dict[str, str]:
    """Warp module name -> ``example`` when one of its kernels is defined in the example's files or the name is
    the example's (``__main__``, ``__main__.<integrand>`` of warp.fem, a helper's module), else ``warp``."""
    helpers = {os.path.splitext(n)[0] for n in os.listdir(root) if n.endswith(".py")}
    out: dict[str, str] = {}
    for e in events:
        name = e.get("module")
        if not isinstance(name, str):
            continue
        paths = [k[0] for k in e.get("kernels") or () if isinstance(k, (list, tuple)) and k]
        if e.get("ev") == "kernel" and e.get("define"):
            paths.append(e["define"][0])
        mine = (name == "__main__" or name.startswith("__main__.") or name.split(".")[0] in helpers
                or any(isinstance(p, str) and in_project(p, root) for p in paths))
        if mine or name not in out:
            out[name] = "example" if mine else "warp"
    return out


def totals(examples: list[dict[str, Any]]) -> dict[str, Any]:
    t: dict[str, Any] = dict.fromkeys(
        ("tp", "fp", "cuda-only", "not-exercised", "inconclusive", "misses", "defect_misses", "misses_in_warp_modules",
         "out_of_scope"), 0)
    by_code: dict[str, int] = {}
    ran = 0
    for e in examples:
        if e["status"] != "ran":
            continue
        ran += 1
        for k, v in e["score"]["counts"].items():
            t[k] += v
        t["misses"] += len(e["score"]["misses"])
        t["defect_misses"] += sum(1 for m in e["score"]["misses"] if m["code"] in DEFECT_CODES)
        t["misses_in_warp_modules"] += sum(1 for m in e["score"]["misses"] if m.get("modules") == "warp")
        for m in e["score"]["misses"]:
            by_code[m["code"]] = by_code.get(m["code"], 0) + 1
        t["out_of_scope"] += len(e["score"]["out_of_scope"])
    t["ran"] = ran
    t["precision"] = _ratio(t["tp"], t["tp"] + t["fp"])
    t["recall"] = _ratio(t["tp"], t["tp"] + t["misses"])
    defect_tp = sum(1 for e in examples if e["status"] == "ran" for f in e["score"]["static"]
                    if f["bucket"] == "tp" and (f["mechanism"] or "").upper() in DEFECT_MECHANISMS)
    t["recall_defects"] = _ratio(defect_tp, defect_tp + t["defect_misses"])
    t["recall_own_modules"] = _ratio(t["tp"], t["tp"] + t["misses"] - t["misses_in_warp_modules"])
    t["misses_by_code"] = dict(sorted(by_code.items()))
    return t


def _ratio(a: int, b: int) -> str:
    return f"{a}/{b} ({100.0 * a / b:.0f} %)" if b else f"{a}/{b} (-)"


# -- the whole run ----------------------------------------------------------------------------------------

def fewer_steps(plan: Plan) -> Plan | None:
    """The plan with every step-count option at 1, or None when it has none above 1."""
    args = list(plan.args)
    changed = False
    for i in range(len(args) - 1):
        if args[i].startswith("-") and args[i].lstrip("-").replace("-", "_") in STEP_CAPS and args[i + 1] != "1":
            args[i + 1] = "1"
            changed = True
    return dataclasses.replace(plan, args=args, notes=list(plan.notes)) if changed else None


def evaluate(plan: Plan, *, rescore: bool, rerun: bool, timeout: float, echo: bool = False,
             log: Any = None) -> dict[str, Any]:
    """One example's entry of the JSON: plan, run (cached), score."""
    entry: dict[str, Any] = {"id": plan.id, "warp_test": plan.warp_test, "notes": list(plan.notes)}
    if plan.skip:
        entry.update(status="skipped", reason=plan.skip)
        return entry
    files = project_files(plan)
    key = digest(plan, files)
    root = materialize(plan, files, key)
    entry.update(key=key, args=list(plan.args), files=sorted(files))
    truth = None if rerun else load_truth(plan, key, root)
    if (truth is not None and not rescore and "timed out" in str(truth.get("failed"))
            and float(truth.get("timeout_s") or 0) < timeout and fewer_steps(plan) is None):
        truth = None  # it timed out under a shorter limit than this one: try the limit asked for now
    if truth is None:
        if rescore:
            entry.update(status="not-run", reason="no cached run (run without --rescore)")
            return entry
        if log:
            log(f"  running {plan.id} {' '.join(plan.args)}")
        truth = record(plan, root, timeout, echo=echo)
        save_truth(plan, key, truth)
        truth = load_truth(plan, key, root)
        assert truth is not None
    entry["recorded"] = truth.get("recorded")
    entry["timeout_s"] = truth.get("timeout_s")
    entry["elapsed_s"] = truth.get("elapsed_s")
    if truth.get("failed"):
        tail = [ln for ln in truth.get("last_output") or [] if ln.strip()]
        shorter = fewer_steps(plan)
        if "timed out" in str(truth["failed"]) and shorter is not None:
            # one step is enough to build what the program builds: try again with that (its own cache entry)
            again = evaluate(shorter, rescore=rescore, rerun=rerun, timeout=timeout, echo=echo, log=log)
            again["notes"] = [*again.get("notes", []), f"timed out with {' '.join(plan.args)}: ran with one step"]
            return again
        entry.update(status="failed", reason=f"{truth['failed']}: {tail[-1].strip()[:200] if tail else ''}")
        return entry
    cold_events = (truth["passes"].get("cold") or {}).get("events") or []
    if not any(e.get("ev") == "load" for e in cold_events):
        tail = [ln for ln in truth.get("last_output") or [] if ln.strip()]
        entry.update(status="no-warp-work", reason="exited without loading any Warp module on CPU"
                     + (f": {tail[-1].strip()[:200]}" if tail else ""))
        return entry
    try:
        diagnostics = lint(root, sorted(files))
    except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as e:
        # the run is cached: `--rescore` scores it once warplint works again
        entry.update(status="lint-failed", reason=str(e)[-300:])
        return entry
    entry.update(status="ran", score=score(diagnostics, truth, root))
    return entry


def run_all(only: Sequence[str] = (), *, rescore: bool = False, rerun: bool = False, timeout: float = 240.0,
            budget_s: float | None = None, echo: bool = False, quiet: bool = False) -> dict[str, Any]:
    wdir = warp_dir()
    regs = warp_test_registrations(wdir)
    plans = [plan_example(wdir, rel, regs) for rel in discover(wdir)]
    if only:
        plans = [p for p in plans if p.id in only or p.id.split(".")[-1] in only]
    # Warp's own CPU-tested examples first, then the rest: a budget cuts the least likely ones
    plans.sort(key=lambda p: (p.skip is not None, p.warp_test != "cpu", p.id))

    def log(msg: str) -> None:
        if not quiet:
            print(msg, file=sys.stderr, flush=True)

    start = time.monotonic()
    entries = []
    for plan in plans:
        over = budget_s is not None and time.monotonic() - start > budget_s
        entry = evaluate(plan, rescore=rescore or over, rerun=rerun and not over, timeout=timeout, echo=echo,
                         log=log)
        if over and entry["status"] == "not-run":
            entry["reason"] = "not run: the time budget of this invocation was spent"
        log(f"{plan.id}: {entry['status']}" + (f" ({entry.get('reason')})" if entry.get("reason") else ""))
        entries.append(entry)
    entries.sort(key=lambda e: e["id"])
    return {
        "format": FORMAT,
        "command": COMMAND + (" --rescore" if rescore else ""),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "warp_version": warp_version(),
        "python": ".".join(map(str, sys.version_info[:3])),
        "warplint": _git_rev(),
        "per_pass_timeout_s": timeout,
        "examples": entries,
        "totals": totals(entries),
    }


def _git_rev() -> str | None:
    try:
        proc = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              timeout=10, check=False)
    except OSError:
        return None
    return proc.stdout.strip() or None


def write(doc: dict[str, Any], path: str = DATA) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1, sort_keys=True)
        fh.write("\n")
    os.replace(path + ".tmp", path)


# -- the report -------------------------------------------------------------------------------------------

def _cell(items: list[str]) -> str:
    return "<br>".join(items) if items else "-"


def markdown_section(path: str = DATA) -> str:
    """The Markdown section for ``docs/accuracy.md``, from the JSON this script wrote (nothing is run)."""
    if not os.path.exists(path):
        return ("## Warp's own examples (real programs)\n\nNo results yet: run `" + COMMAND + "`.\n")
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    t = doc["totals"]
    out = [
        "## Warp's own examples (real programs)",
        "",
        f"`{doc['command']}` on {doc['date']}, warp-lang {doc['warp_version']}, Python {doc['python']}, "
        f"warplint at `{doc.get('warplint') or '?'}`, CPU only, each pass limited to "
        f"{doc['per_pass_timeout_s']:.0f} s.",
        "",
        "Each example of the installed `warp/examples/` that runs on CPU is copied out of `site-packages` (the "
        "recorder takes frames under Warp's own directory for library code) and run cold and warm under "
        "`--confirm`'s recorder with its own options for a short CPU run. The default rules' findings on the "
        "copy are judged against that run: **confirmed** counts as a true positive, **not reproduced** as a "
        "false one (except CS-5/CS-7/CS-13 findings, which only CUDA can show: counted apart), **not "
        "exercised** is left out (so is a CS-6 finding the judge calls not reproduced whose generic kernel the "
        "run never instantiated: only its definition ran). A finding in an example helper (`fem/utils.py`) is "
        "judged in every example that imports it. Runtime-only findings (WC9xx) at a line of the example or its "
        "helpers are **misses**; those pointing into Warp's own library are out of scope (only counted).",
        "",
        f"**Totals** over {t['ran']} examples that ran: precision {t['precision']}, recall {t['recall']} "
        f"(over the defects alone — rebuilds, lost options, lost caches: WC901-WC904, WC908 against CS-1/2/3/3b/6 "
        f"findings — {t['recall_defects']}); {t['cuda-only']} CUDA-only finding(s) not reproducible on CPU, "
        f"{t['not-exercised']} not exercised, {t['inconclusive']} inconclusive, {t['out_of_scope']} runtime "
        f"finding(s) in Warp's library code. Of the misses, {t['misses_in_warp_modules']} are about a module of "
        f"Warp's own (warp.sparse, warp.fem: `[warp]` below) that a call in the example built again or built at a "
        f"cost; the rest about the example's own modules (recall over those: {t['recall_own_modules']}). "
        f"Misses by code: "
        + (", ".join(f"{c} {n}" for c, n in t["misses_by_code"].items()) or "none") + ".",
        "",
        "| example | ran | cold / warm s | built | static findings (verdict) | runtime-only (misses) |",
        "|---|---|---|---|---|---|",
    ]
    skipped = []
    for e in doc["examples"]:
        if e["status"] != "ran":
            skipped.append(e)
            continue
        sc = e["score"]
        run = sc["run"]
        shown = {"cuda-only": " (CUDA-only)", "not-exercised": ""}
        static = [f"{f['code']} {f['path']}:{f['line']} {f['verdict']}"
                  + (" (kernel never instantiated: not exercised)" if f["bucket"] == "not-exercised"
                     and f["verdict"] != NOT_EXERCISED else shown.get(f["bucket"], ""))
                  for f in sc["static"]]
        misses = [f"{m['code']} {m['path']}:{m['line']} ({m['mechanism']})"
                  + (" [warp]" if m.get("modules") == "warp" else "") for m in sc["misses"]]
        if sc["out_of_scope"]:
            misses.append(f"+{len(sc['out_of_scope'])} in Warp's library")
        limit = e.get("timeout_s")
        notes = list(e.get("notes") or [])
        if limit and limit != doc["per_pass_timeout_s"]:
            notes.append(f"pass limit {limit:.0f} s")
        note = f"<br>*{'; '.join(notes)}*" if notes else ""
        out.append(f"| `{e['id']}`{note} | yes | {run['cold_wall_s']} / {run['warm_wall_s']} | "
                   f"{run['compiled_identities']} | {_cell(static)} | {_cell(misses)} |")
    if skipped:
        out += ["", f"Not run here ({len(skipped)}):", "", "| example | status | why |", "|---|---|---|"]
        groups: dict[tuple[str, str], list[str]] = {}
        for e in skipped:  # one row per reason: the 22 benchmarks share one
            groups.setdefault((e["status"], e.get("reason") or ""), []).append(e["id"])
        for (status, reason), ids in groups.items():
            out.append(f"| {', '.join(f'`{i}`' for i in ids)} | {status} | {reason.replace('|', '/')} |")
    return "\n".join(out) + "\n"


# -- command line -----------------------------------------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--rescore", action="store_true", help="no Warp run: score the cached runs only")
    ap.add_argument("--rerun", action="store_true", help="run again even when a cached run exists")
    ap.add_argument("--only", action="append", default=[], help="example id or name (repeatable, comma-separated)")
    ap.add_argument("--timeout", type=float, default=240.0, help="seconds per pass (cold, warm)")
    ap.add_argument("--budget", type=float, default=None, help="start no new run after this many seconds")
    ap.add_argument("--list", action="store_true", help="print the plan and exit")
    ap.add_argument("--echo", action="store_true", help="show each program's output")
    ap.add_argument("--output", default=DATA, help="the JSON written (default: %(default)s)")
    ap.add_argument("--markdown", action="store_true", help="print the Markdown section at the end")
    args = ap.parse_args(argv)
    only = [x for item in args.only for x in item.split(",") if x]
    if args.list:
        wdir = warp_dir()
        regs = warp_test_registrations(wdir)
        for rel in discover(wdir):
            p = plan_example(wdir, rel, regs)
            if only and p.id not in only and p.id.split(".")[-1] not in only:
                continue
            what = f"skip: {p.skip}" if p.skip else " ".join([p.file_name, *p.args])
            print(f"{p.id:55} [{p.warp_test or '-':9}] {what}")
        return 0
    doc = run_all(only, rescore=args.rescore, rerun=args.rerun, timeout=args.timeout, budget_s=args.budget,
                  echo=args.echo)
    if only and os.path.exists(args.output):
        # a partial run updates its examples in the full document
        with open(args.output, encoding="utf-8") as fh:
            old = json.load(fh)
        mine = {e["id"] for e in doc["examples"]}
        doc["examples"] = sorted([e for e in old.get("examples", []) if e["id"] not in mine] + doc["examples"],
                                 key=lambda e: e["id"])
        doc["totals"] = totals(doc["examples"])
    write(doc, args.output)
    t = doc["totals"]
    print(f"{t['ran']} examples ran: precision {t['precision']}, recall {t['recall']}; wrote {args.output}")
    if args.markdown:
        print(markdown_section(args.output))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
