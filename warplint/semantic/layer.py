"""The built base every identity fact reads: the binder's tables, the one evaluator, and one memo.

``Layer`` is what the fact modules below the launches take (devices, option changes, paths,
argument types); ``launches.IdentityFacts`` extends it with the launches and their order, and is
what the fact modules above it take.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from .bindings import Bindings
from .evaluator import Evaluator

T = TypeVar("T")


class Layer:
    def __init__(self, bindings: Bindings, evaluator: Evaluator) -> None:
        self.bindings = bindings
        self.evaluator = evaluator
        self.memo: dict[Hashable, Any] = {}  # derived facts, once per project (keyed by the asker)

    def cached(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()`` once per project: for facts derived from the whole project and asked for again and
        again (the memo dies with the project). Computed apart from the question that asks it first (budget.py):
        the fact is the same whoever asks."""
        if key not in self.memo:
            self.memo[key] = self.evaluator.budget.apart(compute)
        return self.memo[key]
