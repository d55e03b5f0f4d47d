"""The binder's resolution of calls, kept by a session across the layers it builds (issue 28 item 1).

Which function a call calls (``Bindings.callee_of``: a method of an instance made locally or at another module's
import, a function a maker returns) is asked of every call the project's facts follow, and after an edit the
checks of the kept facts ask it again of calls in every file. A call's resolution reads its own file's records,
and of other files only what a name defined at their module level is: the binder looks a name up in a file by
its first part (the *head*: ``Solver`` of ``pkg.mod.Solver.step``) and reads nothing of that file but what the
head's statements define (``Interface``). So the binder notes every (file, head) it looks up, and a session's
next layer takes the resolved calls of every unchanged file over when, for each edited file, every head looked
up there defines the same as before. A head the edit adds that nobody looked up changes no resolution (the
commonest edit adds a name); one that a lookup missed before is a change.

The looked-up heads accumulate while resolutions are carried (a carried resolution still rests on the lookups
that made it) and start afresh when nothing is carried.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from warplint.model import Assignment, Call, FileModel, glimpse

# a model's own ``name = ...`` assignments: scope -> name -> in source order (``file_facts.assignment_tables``)
NamesBound = Callable[[FileModel], Mapping[str, Mapping[str, Sequence[Assignment]]]]

# The binder's tables carried (``Bindings.memo``): a name's owning file and spelling, its definition through
# re-exports, a function's canonical name, what a maker returns, and the class a module-level or local name is bound
# to an instance of (keyed by the model's id: kept for unchanged models only)
CARRIED_TABLES = ("owner_prefix", "definitions", "canonical_function", "returned functions", "instance_classes")


class CallResolution:
    """What a session keeps of its layers' call resolution (``Bindings.callee_of``), handed to each binder it
    builds; a binder made without one gets its own, which carries nothing."""

    def __init__(self) -> None:
        # (id(file), id(call)) -> (call, its callee): held with the call, whose id the key holds. Two generations:
        # those this layer asked, and those carried from the layer before not asked again yet (``callee_of`` moves
        # one over when asked). A layer carries only the entries the one before asked: the calls a layer makes
        # (a call through a bound name, a getter read) are new objects in each, and are never asked again
        self.callees: dict[tuple[int, int], tuple[Call, str]] = {}
        self.earlier_callees: dict[tuple[int, int], tuple[Call, str]] = {}
        # (id(file), id(call)) -> (call, the canonical name it is listed under in ``callers``; None: Warp's API)
        self.resolved: dict[tuple[int, int], tuple[Call, str | None]] = {}
        self.earlier_resolved: dict[tuple[int, int], tuple[Call, str | None]] = {}
        # the binder's memo tables of the lookups a resolution makes (``Bindings.memo``), by name: each answer
        # read only the set of files, the heads it looked up (noted) and, where its key names a model, that model
        self.tables: dict[str, dict] = {name: {} for name in CARRIED_TABLES}
        self.looked_up: dict[str, set[str]] = {}  # path -> the heads the binder looked up in that file
        self._models: dict[str, FileModel] = {}  # path -> the model resolved over (alive: its ids stay unique)
        self._paths: tuple[str, ...] = ()
        self.layers_carried = 0  # how many layers took resolutions over (the tests and benchmarks read it)

    def begin(self, files: Iterable[FileModel], names_bound: NamesBound) -> None:
        """A new layer over ``files``: keep the resolved calls of the files it shares with the last one when no
        edited file defines a looked-up head differently (``names_bound``: a model's own ``name = ...``
        assignments, scope -> name -> in order); else start afresh."""
        current = {f.path: f for f in files}
        paths = tuple(current)
        edited = [path for path in paths if self._models.get(path) is not current[path]]
        if paths == self._paths and self._lookups_hold(edited, current, names_bound):
            self.layers_carried += bool(edited)
            unchanged = {id(current[path]) for path in paths} - {id(current[path]) for path in edited}
            self.earlier_callees = {key: entry for key, entry in self.callees.items() if key[0] in unchanged}
            self.earlier_resolved = {key: entry for key, entry in self.resolved.items() if key[0] in unchanged}
            tables = self.tables
            tables["instance_classes"] = {key: found for key, found in tables["instance_classes"].items()
                                          if key[0] in unchanged}
            tables["owner_prefix"] = {ref: found for ref, found in tables["owner_prefix"].items()
                                      if found is None or id(found[0]) in unchanged}
        else:
            self.earlier_callees, self.earlier_resolved = {}, {}
            self.looked_up = {}
            self.tables = {name: {} for name in CARRIED_TABLES}
        self.callees, self.resolved = {}, {}
        self._models = current
        self._paths = paths

    def _lookups_hold(self, edited: list[str], current: dict[str, FileModel], names_bound: NamesBound) -> bool:
        for path in edited:
            heads = self.looked_up.get(path)
            if heads:
                before, now = (Interface(model, names_bound(model)) for model in (self._models[path], current[path]))
                if any(before.of(head) != now.of(head) for head in heads):
                    return False
        return True

    def note(self, file: FileModel, head: str) -> None:
        """The binder looked ``head`` up in ``file`` (found or not)."""
        found = self.looked_up.get(file.path)
        if found is None:
            found = self.looked_up[file.path] = set()
        found.add(head)


class Interface:
    """What one model defines under each module-level name, as far as resolving a call reads it: the functions
    and classes under the name (their scope, decorators, returned expressions and the inner functions their body
    binds again: ``Bindings.returned_function``), the module-level imports and assignments binding it (their
    values: ``Bindings._instance_method``)."""

    def __init__(self, model: FileModel, names: Mapping[str, Mapping[str, Sequence[Assignment]]]) -> None:
        self._model = model
        self._names = names  # scope -> name -> its ``name = ...`` assignments there

    def of(self, head: str) -> tuple:
        model, names = self._model, self._names
        prefix = f"{head}."
        functions = [(q, fn) for q, fn in model.functions.items() if q == head or q.startswith(prefix)]
        return (
            tuple((q, fn.ctx.scope, tuple(fn.decorators), tuple((r.kind, r.text) for r in fn.returns),
                   tuple(sorted(n for n in names.get(q, {}) if f"{q}.{n}" in model.functions)))
                  for q, fn in functions),
            tuple(q for q in model.classes if q == head or q.startswith(prefix)),
            tuple((imp.module, imported, imp.alias) for imp in model.imports if not imp.ctx.scope
                  for imported, alias in (imp.names or ((None, imp.alias),)) if alias == head),
            tuple((value.kind, value.ref, value.text)
                  for value in (glimpse(a, "value") for a in names.get("", {}).get(head, ()))),
        )
