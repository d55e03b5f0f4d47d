"""The rule contract. One rule per file in ``rules/`` (installed as ``warplint.rules``).

A rule is a class with its metadata as class attributes and its documentation as
the docstring (``warplint rule WC101`` prints it; docs/rules/WC101.md is generated
from it). ``check`` reads the file's model and the project index and yields
``Report``s; it knows nothing about output formats or suppression.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from .diagnostic import Fix, Related, Span

if TYPE_CHECKING:
    import libcst as cst

    from .index import Project
    from .model import FileModel

CODE_PATTERN = re.compile(r"^WC\d{3}$")
NAME_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
CONFIDENCES = ("high", "medium", "low")


@dataclass
class Report:
    span: Span
    message: str
    data: dict[str, Any] = field(default_factory=dict)
    fix: Fix | None = None
    related: tuple[Related, ...] = ()
    # Why the defect is deliberate where it is written (a cache clear in test code): such reports are
    # kept only with ``report-deliberate`` (the engine decides; the rule only says why).
    deliberate: str | None = None


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case, stable
    mechanism: ClassVar[str]  # "CS-1" ... "CS-13" (see docs/mechanisms.md)
    summary: ClassVar[str]  # one line: what is wrong
    confidence: ClassVar[str] = "high"  # how often a finding is a real defect on mature code
    default_enabled: ClassVar[bool] = True  # opt-in rules are enabled by their exact code or ALL
    runtime_only: ClassVar[bool] = False  # reported by --confirm only (WC9xx)
    # Examples double as tests. A multi-file example separates files with
    # lines "# file: name.py"; the first file is the one checked.
    invalid: ClassVar[tuple[str, ...]] = ()
    valid: ClassVar[tuple[str, ...]] = ()

    def collect(self) -> cst.CSTVisitor | None:
        """Optional: a visitor run in the engine's single traversal of each file.

        Whatever it stores in ``model.rule_facts[self.code]`` (plain picklable data)
        is available to ``check`` and is cached with the model. Most rules need none.
        A visitor that needs source positions subclasses ``warplint.locate.PositionedVisitor``
        and asks ``self.positions.spans(nodes)`` once the traversal is over (e.g. in a
        ``facts`` property); never a metadata provider or a second pass over the file.
        """
        return None

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        return iter(())

    def check_project(self, project: Project) -> Iterator[tuple[FileModel, Report]]:
        """Optional, for project-wide rules: run once per project (not once per file), yielding each
        report with the file it belongs to. The engine hands each file its own reports."""
        return iter(())

    # -- helpers for rule authors
    def report(self, span: Span, message: str, fix: Fix | None = None, related: tuple[Related, ...] = (),
               deliberate: str | None = None, **data: Any) -> Report:
        return Report(span, message, data, fix, tuple(related), deliberate)

    @classmethod
    def doc(cls) -> str:
        import inspect

        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def validate(cls) -> None:
        problems = []
        if not CODE_PATTERN.match(getattr(cls, "code", "")):
            problems.append("code must be WC + 3 digits")
        if not NAME_PATTERN.match(getattr(cls, "name", "")):
            problems.append("name must be kebab-case")
        if cls.confidence not in CONFIDENCES:
            problems.append(f"confidence must be one of {CONFIDENCES}")
        for attr in ("mechanism", "summary"):
            if not getattr(cls, attr, ""):
                problems.append(f"{attr} is required")
        if not cls.__doc__:
            problems.append("the docstring is the rule's documentation and is required")
        if problems:
            raise TypeError(f"rule {cls.__module__}.{cls.__qualname__}: " + "; ".join(problems))
