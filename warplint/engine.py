"""The lint pipeline: discover -> prefilter -> parse + extract -> index -> rules -> suppress.

Front ends (CLI, flake8, LSP, --confirm) all go through ``Session``.
"""

from __future__ import annotations

import io
import os
import re
import tokenize
from dataclasses import dataclass, field
from typing import Iterable

import libcst as cst

from .config import Config
from .diagnostic import Diagnostic, Span
from .discovery import Discovery
from .extract import extract
from .index import Project, locate_installed
from .model import FileModel
from .names import module_name_for_path
from .noqa import find_suppressions
from .registry import FileError, all_rules
from .rule import Rule

_IMPORT_LINE = re.compile(r"^\s*(?:from\s+(\.*[\w.]*)\s+import\s+([\w\s,()*]+)|import\s+([\w.]+))", re.M)


@dataclass
class LintResult:
    diagnostics: list[Diagnostic]
    files: int = 0  # files looked at
    parsed: int = 0  # files parsed (the rest were skipped by the prefilter)
    errors: list[str] = field(default_factory=list)  # fatal, one-line (exit 2)


def decode(data: bytes) -> str:
    """Decode Python source honouring a PEP 263 coding line; UTF-8 otherwise."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        encoding = "utf-8"
    text = data.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


def rule_visitors(rules: Iterable[Rule]) -> list[tuple[str, cst.CSTVisitor]]:
    found = []
    for rule in rules:
        visitor = rule.collect()
        if visitor is not None:
            found.append((rule.code, visitor))
    return found


def analyze(path: str, text: str, module: str | None = None, is_package: bool | None = None) -> FileModel:
    """Parse and extract one file. Never raises for bad input: ``model.error`` says why."""
    if module is None or is_package is None:
        module, is_package = module_name_for_path(path)
    model = FileModel(path=path, module=module, is_package=is_package)
    model.mentions_warp = "warp" in text
    try:
        tree = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        model.error = f"syntax error: {exc.message} (line {exc.raw_line}, column {exc.raw_column})"
        model.rule_facts["error_span"] = Span(exc.raw_line, max(exc.raw_column, 0), exc.raw_line, max(exc.raw_column, 0))
        return model
    except (RecursionError, MemoryError, ValueError) as exc:
        model.error = f"could not parse: {type(exc).__name__}"
        return model
    visitors = rule_visitors(all_rules().values())
    try:
        extract(tree, model, [v for _, v in visitors])
    except RecursionError:
        model.error = "could not analyse: nesting too deep"
        return model
    for code, visitor in visitors:
        facts = getattr(visitor, "facts", None)
        if facts is not None:
            model.rule_facts[code] = facts
    return model


def _imported_modules(text: str, module: str, is_package: bool) -> set[str]:
    from .names import resolve_relative

    found: set[str] = set()
    for m in _IMPORT_LINE.finditer(text):
        if m.group(3):
            found.add(m.group(3))
        else:
            target = m.group(1)
            level = len(target) - len(target.lstrip("."))
            base = resolve_relative(module, is_package, level, target.lstrip(".") or None)
            found.add(base)
            for name in re.split(r"[\s,()]+", m.group(2)):
                if name and name != "*" and name != "as":
                    found.add(f"{base}.{name}")
    return found


class Session:
    """One configuration, its rules, and the project index; reused across checks."""

    def __init__(self, config: Config, rules: dict[str, Rule] | None = None) -> None:
        self.config = config
        self.rules = rules if rules is not None else all_rules()
        self.enabled = config.enabled_codes(self.rules)
        self.discovery = Discovery(config)
        self.models: dict[str, FileModel] = {}  # absolute path -> model
        self.texts: dict[str, str] = {}
        self._external: dict[str, FileModel | None] = {}

    # ------------------------------------------------------------------ reading
    def read(self, path: str) -> tuple[str | None, str | None]:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            return None, f"cannot read file: {exc.strerror or exc}"
        try:
            return decode(data), None
        except (UnicodeDecodeError, LookupError) as exc:
            return None, f"cannot decode file: {exc}"

    def load_external(self, module: str) -> FileModel | None:
        """Installed (non-project) module, read from disk and modelled; never imported."""
        if module in self._external:
            return self._external[module]
        self._external[module] = None
        path = locate_installed(module)
        if path is None:
            return None
        text, error = self.read(path)
        if text is None:
            return None
        name, is_package = module, os.path.basename(path) == "__init__.py"
        model = analyze(path, text, name, is_package) if "warp" in text else FileModel(path, name, is_package)
        self._external[module] = model
        return model

    def add_file(self, path: str, text: str | None, error: str | None = None) -> FileModel:
        absolute = os.path.abspath(path)
        module, is_package = module_name_for_path(absolute)
        if text is None:
            model = FileModel(path=path, module=module, is_package=is_package, error=error)
        elif "warp" in text:
            model = analyze(path, text, module, is_package)
        else:
            model = FileModel(path=path, module=module, is_package=is_package)
            model.rule_facts["unparsed"] = True
        self.models[absolute] = model
        if text is not None:
            self.texts[absolute] = text
        return model

    def _parse_importers(self) -> None:
        """Files that never mention warp are parsed only if they import a project module
        that does something Warp-related (they may order its launches and option calls)."""
        warp_modules = {m.module for m in self.models.values() if m.mentions_warp and not m.error}
        if not warp_modules:
            return
        # Modules Warp code imports from may hold the constants it uses (block sizes, names).
        imported_by_warp: set[str] = set()
        for m in self.models.values():
            if m.mentions_warp and not m.error:
                for imp in m.imports:
                    imported_by_warp.add(imp.module)
                    imported_by_warp.update(f"{imp.module}.{name}" for name, _ in imp.names)
        for absolute, model in list(self.models.items()):
            if not model.rule_facts.get("unparsed"):
                continue
            text = self.texts.get(absolute, "")
            imports_warp_code = _imported_modules(text, model.module, model.is_package) & warp_modules
            if model.module in imported_by_warp or imports_warp_code:
                self.models[absolute] = analyze(model.path, text, model.module, model.is_package)

    def project(self) -> Project:
        return Project(self.models.values(), self.load_external)

    # ------------------------------------------------------------------ checking
    def check_model(self, model: FileModel, project: Project) -> list[Diagnostic]:
        absolute = os.path.abspath(model.path)
        ignored = self.config.ignored_for(absolute)
        text = self.texts.get(absolute, "")
        if model.error is not None:
            codes = {FileError.code}
            span = model.rule_facts.get("error_span", Span(1, 0, 1, 0))
            diagnostics = [self._diagnostic(FileError(), model.path, span, model.error, {}, None)]
        else:
            codes = self.enabled
            diagnostics = []
            if model.mentions_warp or not model.rule_facts.get("unparsed"):
                for code in sorted(codes):
                    rule = self.rules[code]
                    if any(code.startswith(i) for i in ignored):
                        continue
                    for report in rule.check(model, project):
                        diagnostics.append(
                            self._diagnostic(rule, model.path, report.span, report.message, report.data, report.fix)
                        )
        suppressions = find_suppressions(text)
        kept = [d for d in diagnostics if d.code in codes and not suppressions.suppressed(d.code, d.span.line)]
        unique: dict[tuple, Diagnostic] = {}
        for d in kept:
            unique.setdefault((d.path, d.span, d.code, d.message), d)
        return sorted(unique.values(), key=Diagnostic.sort_key)

    def keeps(self, diagnostic: Diagnostic) -> bool:
        """Whether ignore / per-file-ignores / noqa let a finding made elsewhere (--confirm) through."""
        code = diagnostic.code
        ignored = (*self.config.ignore, *self.config.ignored_for(diagnostic.path))
        if any(code.startswith(i) or i == "ALL" for i in ignored):
            return False
        text = self.texts.get(os.path.abspath(diagnostic.path))
        if text is None:
            text, _ = self.read(diagnostic.path)
        return not find_suppressions(text or "").suppressed(code, diagnostic.span.line)

    @staticmethod
    def _diagnostic(rule: Rule, path: str, span: Span, message: str, data: dict, fix) -> Diagnostic:
        return Diagnostic(
            path=path, span=span, code=rule.code, name=rule.name, mechanism=rule.mechanism,
            message=message, confidence=rule.confidence, fix=fix, data=dict(data),
        )

    def lint_paths(self, paths: list[str], stdin: tuple[str, str] | None = None) -> LintResult:
        """Lint files under ``paths``; ``stdin`` is (display filename, text) for ``-``."""
        result = LintResult([])
        targets: list[str] = []
        for path in self.discovery.files([p for p in paths if p != "-"]):
            if not os.path.lexists(path):
                result.errors.append(f"{path}: no such file or directory")
                continue
            text, error = self.read(path)
            self.add_file(path, text, error)
            targets.append(os.path.abspath(path))
        if stdin is not None:
            name, text = stdin
            self.add_file(name, text)
            targets.append(os.path.abspath(name))
        self._parse_importers()
        project = self.project()
        for absolute in targets:
            model = self.models[absolute]
            result.files += 1
            if not model.rule_facts.get("unparsed"):
                result.parsed += 1
            result.diagnostics.extend(self.check_model(model, project))
        result.diagnostics.sort(key=Diagnostic.sort_key)
        return result

    def check_text(self, path: str, text: str) -> list[Diagnostic]:
        """Re-check one (possibly unsaved) file against the project index (LSP, flake8)."""
        model = self.add_file(path, text)
        if model.rule_facts.get("unparsed") and model.error is None:
            self._parse_importers()
            model = self.models[os.path.abspath(path)]
        return self.check_model(model, self.project())

    def index_root(self) -> None:
        """Model every file under the config root (for editors and flake8)."""
        for path in self.discovery.files([self.config.root]):
            if os.path.abspath(path) not in self.models:
                text, error = self.read(path)
                self.add_file(path, text, error)
        self._parse_importers()
