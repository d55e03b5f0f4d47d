"""The command-line options of --confirm's profiler (``--what-if``, ``--samples``, ``--what-if-jobs``), kept
here so the CLI only adds them and passes them on. Outside the ``confirm`` package, whose import (the
runner, the what-if machinery) every CLI run building its parser paid for, a warm run too."""

from __future__ import annotations

import argparse
from typing import Any


class ProfilingOptionError(ValueError):
    pass


def add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--what-if", action="append", default=[], metavar="CHANGE",
                   help="with --confirm: re-run cold with CHANGE applied by the harness and measure the saving "
                        "(NAME=VALUE for wp.config, no-clear-cache, module-options:MODULE:key=value, "
                        "parallel-preload, auto); repeatable")
    p.add_argument("--samples", type=int, default=None, metavar="N",
                   help="with --confirm: cold+warm samples per side (3 or more for a noise band; default 1)")
    p.add_argument("--what-if-jobs", type=int, default=None, metavar="N",
                   help="with --what-if: measure N candidates at once (default 1; more is faster, noisier)")
    p.add_argument("--report", default=None, metavar="FILE.html",
                   help="with --confirm: write the cold run's timeline, the ranked findings and the what-if "
                        "savings as one self-contained HTML page")


def options_of(args: Any) -> dict[str, Any]:
    """The run_confirm keyword arguments the options give (only those set)."""
    out: dict[str, Any] = {}
    specs = list(getattr(args, "what_if", None) or ())
    if specs:
        from .confirm.whatif import WhatIfError, parse_whatifs

        try:
            parse_whatifs(specs)
        except WhatIfError as e:
            raise ProfilingOptionError(str(e)) from None
        out["what_if"] = specs
    samples = getattr(args, "samples", None)
    if samples is not None:
        if samples < 1:
            raise ProfilingOptionError(f"--samples must be at least 1, got {samples}")
        out["samples"] = samples
    jobs = getattr(args, "what_if_jobs", None)
    if jobs is not None:
        if jobs < 1:
            raise ProfilingOptionError(f"--what-if-jobs must be at least 1, got {jobs}")
        out["what_if_jobs"] = jobs
    report = getattr(args, "report", None)
    if report is not None:
        out["report"] = report
    return out
