"""parse_guard: long chains never crash the process nor give a false WC000; invalid code keeps its WC000.

The thresholds are in docs/robustness.md (``benchmarks/parse_limits.py``).
"""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from warplint import parse_guard
from warplint.engine import analyze

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("chains", os.path.join(ROOT, "benchmarks", "chains.py"))
chains = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(chains)
SHAPES = chains.SHAPES

# Lengths past what a 512 KiB thread (~200-600 links) or, for the fast shapes, the 8 MiB
# main thread (~3,500-8,300) overflowed before: each crashed LibCST's parser in process.
# Shapes whose parse time grows quadratically (trailers, ``+``) stay short enough to be quick.
CHAINS = [
    ("and", 9000), ("or", 9000), ("comparison", 9000), ("elif", 1200), ("implicit concatenation", 2999),
    ("lambda", 700), ("unary minus", 1200), ("not", 1200), ("if-else expression", 800), ("plus", 900),
    ("power", 900), ("attribute", 700), ("call", 700), ("subscript", 500), ("mixed trailers", 600),
    ("decorators", 5000), ("f-string fields", 5000), ("assignment targets", 5000), ("nested blocks", 99),
    ("parentheses", 200), ("nested calls", 200), ("nested lists", 200),
]

# Shaped like an embedded image in a loading-screen module (isaaclab's app/...loading_screen.py):
# thousands of implicitly concatenated string lines inside one call.
ISAACLAB_LIKE = (
    "import base64\n\n\nclass LoadingScreen:\n    def __init__(self):\n"
    "        self.image = base64.b64decode(\n"
    + "".join(f'            "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4{i:06d}"\n' for i in range(2500))
    + "        )\n\n    def show(self):\n        return self.image\n"
)

CHILD = r"""
import json, sys
from warplint.engine import analyze
results = []
for name, text in json.load(sys.stdin):
    model = analyze("chain.py", text)
    results.append((name, model.error))
print(json.dumps(results))
"""


def run_in_child(cases):
    """``analyze`` each (name, text) in a subprocess: a segfault fails the test, not the run."""
    done = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(cases), capture_output=True, text=True,
                          check=False, timeout=300, cwd=ROOT)
    assert done.returncode == 0, f"analyze crashed (exit {done.returncode}): {done.stderr[-2000:]}"
    return dict(json.loads(done.stdout))


def test_chains_near_and_above_the_thresholds_are_modelled_without_crashing():
    cases = [(f"{shape} x{n}", SHAPES[shape](n)) for shape, n in CHAINS]
    for name, text in cases:
        verdict = parse_guard.classify(text)
        assert verdict.kind is parse_guard.Kind.SAFE, (name, verdict)
        assert verdict.stack <= parse_guard.MAX_STACK
    in_child = [*cases, ("isaaclab-like", ISAACLAB_LIKE)]
    errors = run_in_child(in_child)
    assert errors == {name: None for name, _ in in_child}


def test_the_stack_asked_for_grows_with_the_chain():
    small, large = (parse_guard.classify(SHAPES["and"](n)).stack for n in (100, 100_000))
    assert small < large
    # 100,000 links need more than the 8 MiB a main thread has (LibCST crashed at ~7,200).
    assert large > 8 << 20


def test_deep_brackets_cpython_rejects_are_invalid_with_its_reason():
    for shape in ("parentheses", "nested calls", "nested lists"):
        verdict = parse_guard.classify(SHAPES[shape](201))
        assert verdict.kind is parse_guard.Kind.INVALID, shape
        assert verdict.reason == "syntax error: too many nested parentheses (line 1)"
    model = analyze("deep.py", "import warp\n" + SHAPES["parentheses"](5000))
    assert model.error == "syntax error: too many nested parentheses (line 2)"


def test_deep_unclosed_brackets_are_invalid():
    verdict = parse_guard.classify("x = " + "(" * 3000 + "1\n")  # crashed LibCST at 8 MiB
    assert verdict.kind is parse_guard.Kind.INVALID
    assert verdict.reason.startswith("syntax error: ")


def test_brackets_in_strings_are_no_false_alarm():
    text = "x = '" + "(" * 500 + "'\ny = f(1)\n"
    verdict = parse_guard.classify(text)  # looks deep to the bracket count; ast says it is fine
    assert verdict.kind is parse_guard.Kind.SAFE
    assert analyze("s.py", text).error is None


def test_ordinary_code_is_safe():
    text = "import warp as wp\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n" * 200
    verdict = parse_guard.classify(text)
    assert verdict == parse_guard.Verdict(parse_guard.Kind.SAFE, stack=verdict.stack)


def test_a_text_no_stack_can_hold_is_isolated_and_not_parsed_here(monkeypatch):
    monkeypatch.setattr(parse_guard, "MAX_STACK", 16 << 20)
    text = SHAPES["and"](20_000)
    verdict = parse_guard.classify(text)
    assert verdict.kind is parse_guard.Kind.ISOLATE
    assert "MiB of parser stack" in verdict.reason
    model = analyze("long.py", text)
    assert model.error.startswith("not parsed: its chains may need")
    # Invalid code is still invalid, whatever its size.
    assert parse_guard.classify(text + "x = (\n").kind is parse_guard.Kind.INVALID


def test_isolated_text_is_parsed_in_a_sacrificial_process(monkeypatch):
    monkeypatch.setattr(parse_guard, "MAX_STACK", 16 << 20)
    monkeypatch.setattr(parse_guard, "IN_SACRIFICIAL_PROCESS", True)
    assert analyze("long.py", SHAPES["and"](2000) * 10).error is None


def test_invalid_code_keeps_its_syntax_error():
    model = analyze("bad.py", "import warp\ndef f(:\n    pass\n")
    assert model.error.startswith("syntax error:")
    assert model.rule_facts["error_span"].line >= 2


def test_libcst_limits_say_so():
    # More than ~3,000 implicitly concatenated strings: LibCST reports a syntax error CPython does not.
    model = analyze("many.py", SHAPES["implicit concatenation"](3100))
    assert model.error.startswith("not parsed: LibCST rejects this file, which CPython accepts")


def test_deep_trees_are_modelled_like_shallow_ones():
    # The traversal is retried with room for the recursion: the model is complete.
    deep = "import warp as wp\nwp.config.mode = 'debug'\nx = " + " + ".join(["a"] * 900) + "\nwp.force_load()\n"
    model = analyze("deep.py", deep)
    assert model.error is None
    assert [c.callee for c in model.calls] == ["warp.force_load"]
    assert [a.target.text for a in model.assignments] == ["wp.config.mode", "x"]


def test_call_with_stack_hands_back_results_and_exceptions():
    assert parse_guard.call_with_stack(64 << 20, lambda a, b: a + b, 2, 3) == 5
    with pytest.raises(KeyError):
        parse_guard.call_with_stack(64 << 20, {}.__getitem__, "missing")


def test_recursion_room_is_put_back():
    before = sys.getrecursionlimit()
    with parse_guard.recursion_room(5000):
        assert sys.getrecursionlimit() == before + 5000
    assert sys.getrecursionlimit() == before
