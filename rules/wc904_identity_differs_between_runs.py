from __future__ import annotations

from warplint.rule import Rule


class IdentityDiffersBetweenRuns(Rule):
    """A module got a different identity in the second run than in the first, seen by `--confirm`.

    ## What was seen
    `--confirm` runs the command twice on the same caches. A module built an identity (hash) in
    the second run that the first run never built, so the cache could not help and the module
    compiled again. The module's content depends on something that changes between runs: a
    kernel that captures (or `wp.static`-evaluates) a timestamp, a random value, an `id()`, a
    temporary path, the order of a `set`; or options computed from such values. Every run of
    the program pays a cold compile for it.

    ## Fix
    Pass run-dependent values as kernel arguments instead of capturing them, or make them
    deterministic (fixed seed, sorted order).
    """

    code = "WC904"
    name = "identity-differs-between-runs"
    mechanism = "CS-2"
    summary = "A module's identity changes from run to run, so its compiled cache never hits."
    confidence = "medium"
    runtime_only = True

    invalid = (
        "import time\nimport warp as wp\n\nSEED = time.time()\n\n"
        "@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[wp.tid()] = float(SEED)  # captured: new hash per run\n",
    )
    valid = (
        "import time\nimport warp as wp\n\n"
        "@wp.kernel\ndef k(a: wp.array(dtype=float), seed: float):\n    a[wp.tid()] = seed\n",
    )
