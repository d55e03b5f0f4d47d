"""The binder's resolution of calls and imports, kept by a session across the layers it builds (issue 28 item 1).

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

The import graph (``ImportGraph``) is a function of the set of files and of the module names each file's imports
run: kept while an edit changes neither.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from warplint.model import Assignment, Call, FileModel, glimpse

# a model's own ``name = ...`` assignments: scope -> name -> in source order (``file_facts.assignment_tables``)
NamesBound = Callable[[FileModel], Mapping[str, Mapping[str, Sequence[Assignment]]]]

# The binder's tables carried (``Bindings.memo``): a name's owning file and spelling, its definition through
# re-exports, whether that is a class, a function's canonical name, what a maker returns, the class a module-level
# or local name is bound to an instance of (keyed by the model's id: kept for unchanged models only), and the names of
# attributes assigned off classes (keyed by the count of changes of the attributes assigned: ``NameGroups.names_made``)
CARRIED_TABLES = ("owner_prefix", "definitions", "is class", "canonical_function", "returned functions",
                  "instance_classes", "attribute names assigned")


# A group of calls resolved (``Bindings._resolve_calls_named``): the group (file, its calls of the name), held, as the
# binder's call groups gave it; each call's entry, (id(file), id(call)) -> (call, the canonical name it is listed
# under in ``callers``; None: Warp's API); and the (canonical name, (file, call)) it listed, in order.
ResolvedGroup = tuple[Sequence[tuple[FileModel, Sequence[Call]]], dict[tuple[int, int], tuple[Call, str | None]],
                      list[tuple[str, tuple[FileModel, Call]]]]


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
        # the last part of a callee's name -> its group of calls as resolved (``ResolvedGroup``): by this layer, and
        # by the layer before (a group the edit left as it was is taken over whole: ``Bindings._resolve_calls_named``)
        self.resolved: dict[str, ResolvedGroup] = {}
        self.earlier_resolved: dict[str, ResolvedGroup] = {}
        # the binder's memo tables of the lookups a resolution makes (``Bindings.memo``), by name: each answer
        # read only the set of files, the heads it looked up (noted) and, where its key names a model, that model
        self.tables: dict[str, dict] = {name: {} for name in CARRIED_TABLES}
        self.looked_up: dict[str, set[str]] = {}  # path -> the heads the binder looked up in that file
        self._models: dict[str, FileModel] = {}  # path -> the model resolved over (alive: its ids stay unique)
        self._paths: tuple[str, ...] = ()
        self.layers_carried = 0  # how many layers took resolutions over (the tests and benchmarks read it)
        self.groups = NameGroups(leaves=_calls_a_result)  # every file's calls, by the last part of the callee
        self.binder_groups = SameGroups()  # the groups the binder makes itself (``Bindings._calls_grouped``)
        self.attribute_groups = NameGroups()  # every file's attribute assignments, by the attribute's name
        self.imports = ImportGraph()  # the files each file imports
        self.function_files = FunctionFiles()  # the file of each function

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
            # carried whole, not filtered by file: an entry holds its call, an edited file's calls are new objects,
            # so no call asked about now has the key of an entry of a replaced model (never asked again, those go
            # with the next layer's carry, which takes only the entries asked)
            self.earlier_callees = self.callees
            self.earlier_resolved = self.resolved
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


class SameGroups:
    """The call groups a binder makes itself each layer (of calls through bound names, and of the calls of files that
    call a returned function, merged with the files' own groups), handed over as the last layer's list where a group
    is made of the same parts: the same own group list, the same (file, call) objects in the same order. Only a
    group list handed over unchanged is taken over resolved (``Bindings._resolve_calls_named``)."""

    def __init__(self) -> None:
        # name -> (the own group, the made and the through calls, the group made of them) of the last layer (alive:
        # their objects' ids stay theirs)
        self._last: dict[str, tuple[Group | None, Sequence[tuple[FileModel, Call]], Sequence[tuple[FileModel, Call]],
                                    Group]] = {}
        self._now: dict[str, tuple[Group | None, Sequence[tuple[FileModel, Call]], Sequence[tuple[FileModel, Call]],
                                   Group]] = {}
        self._layer: object = None
        self.handed_over = 0  # groups handed over as the last layer's (the tests read it)

    def merged(self, name: str, own: Group | None, made: Sequence[tuple[FileModel, Call]],
               through: Sequence[tuple[FileModel, Call]], position: Mapping[int, int]) -> Group:
        """The group of ``name``: the calls ``through`` bound names first, then the files' own group and the ``made``
        calls in file order (``position``: a file's place, by id); the last layer's list when made of the same."""
        if self._layer is not position:  # a new layer's first group: the last layer's are those made until now
            self._layer, self._last, self._now = position, self._now, {}
        before = self._last.get(name)
        if before is not None and before[0] is own and _same_calls(before[1], made) and _same_calls(before[2], through):
            self.handed_over += 1
            group = before[3]
        else:
            group = [(f, (call,)) for f, call in through]
            if made:
                group += sorted([*(own or ()), *((f, (call,)) for f, call in made)],
                                key=lambda entry: position[id(entry[0])])
            else:
                group += own or ()
        self._now[name] = (own, made, through, group)
        return group


def _same_calls(a: Sequence[tuple[FileModel, Call]], b: Sequence[tuple[FileModel, Call]]) -> bool:
    """The same (file, call) pairs: the same objects, in the same order (equal objects of another model are not: a
    resolution holds the calls it resolved)."""
    return len(a) == len(b) and all(fa is fb and ca is cb for (fa, ca), (fb, cb) in zip(a, b, strict=True))


OwnTable = Callable[[FileModel], Mapping[str, Sequence[Any]]]
Group = list[tuple[FileModel, Sequence[Any]]]


def _calls_a_result(by_last_name: Mapping[str, object]) -> bool:
    """A file that calls the result of a call (``make(c)()``, a name ending in ``()``): what its calls are grouped
    under depends on other files (what ``make`` returns), so the binder groups them itself."""
    return any(name.endswith("()") for name in by_last_name)


class NameGroups:
    """A table of the project made of every file's own table (name -> its entries there), grouped by name, in file
    order, and kept across a session's layers: after an edit only the groups of the names in the edited files' tables
    are made again, not every group of every file. The binder's calls by the last part of the callee's name
    (``Bindings._resolve_calls_named`` resolves a group the first time a name in it is asked for: regrouping every
    file was about a tenth of the binder's answers asked again after a newton edit) and its attribute assignments
    by attribute. A file whose table ``leaves`` accepts is left to the binder (``over``)."""

    def __init__(self, leaves: Callable[[Mapping[str, Any]], bool] | None = None) -> None:
        self._leaves = leaves
        self._groups: dict[str, Group] = {}  # name -> (file, its calls of that name), in file order
        self._models: dict[str, FileModel] = {}  # path -> the model grouped (alive: its id stays unique)
        self._names: dict[str, tuple[str, ...]] = {}  # path -> the names its calls are grouped under
        self._paths: tuple[str, ...] = ()
        self._left: list[FileModel] = []  # the files left to the binder, in file order
        self.regrouped = 0  # groups made again after an edit, a file taken out or put in (the tests read it)
        self.names_made = 0  # counts every change of the set of names grouped: the same count, the same names

    def over(self, files: Sequence[FileModel], own_table: OwnTable) -> tuple[dict[str, Group], list[FileModel]]:
        """(name -> its group, shared: read it, never change it; the files left to the caller)."""
        paths = tuple(f.path for f in files)
        if paths != self._paths:
            self._groups, self._models, self._names, self._paths = {}, {}, {}, paths
            self.names_made += 1
            for f in files:
                self._add(f, own_table(f), None)
        else:
            position = {id(f): i for i, f in enumerate(files)}
            for f in files:
                before = self._models[f.path]
                if before is not f:
                    self._remove(before)
                    self._add(f, own_table(f), position)
        self._left = [f for f in files if self._names.get(f.path) is None]
        return self._groups, self._left

    def _add(self, file: FileModel, table: Mapping[str, Sequence[Any]], position: dict[int, int] | None) -> None:
        self._models[file.path] = file
        if self._leaves is not None and self._leaves(table):
            self._names.pop(file.path, None)
            return
        self._names[file.path] = tuple(table)
        groups = self._groups
        for name, entries in table.items():
            group = groups.get(name)
            if group is None:
                groups[name] = [(file, entries)]
                self.names_made += 1
            elif position is None:  # (made in file order)
                group.append((file, entries))
            else:  # a new list in file order (a layer's table shares the one it replaces)
                groups[name] = sorted([*group, (file, entries)], key=lambda entry: position[id(entry[0])])
                self.regrouped += 1

    def _remove(self, file: FileModel) -> None:
        for name in self._names.pop(file.path, ()):
            group = [entry for entry in self._groups[name] if entry[0] is not file]
            self.regrouped += 1
            if group:
                self._groups[name] = group
            else:
                del self._groups[name]
                self.names_made += 1


class FunctionFiles:
    """The file that defines each function of the project, by the ``Function`` object's id (``Bindings
    .file_of_function``), kept across a session's layers: after an edit only the edited files' functions are taken out
    and put in again, not every function of every file."""

    def __init__(self) -> None:
        self._files: dict[int, FileModel] = {}
        self._models: dict[str, FileModel] = {}  # path -> the model listed (alive: its functions' ids stay theirs)

    def over(self, files: Sequence[FileModel]) -> dict[int, FileModel]:
        """id(a function of one of ``files``) -> that file: the layer's own table (a copy: a later layer changes
        the one kept)."""
        table, models = self._files, self._models
        if len(files) != len(models) or any(f.path not in models for f in files):
            table.clear()
            models.clear()
        for f in files:
            before = models.get(f.path)
            if before is not f:
                if before is not None:
                    for fn in before.functions.values():
                        del table[id(fn)]
                models[f.path] = f
                table.update((id(fn), f) for fn in f.functions.values())
        return dict(table)


class ImportGraph:
    """The project's files each file imports, by path (``Imports``), kept across a session's layers: a layer after an
    edit makes the graph again only when the files or their module names changed or an edited file's imports run
    other modules than before (the commonest edit changes no import), and the walks through it with it."""

    def __init__(self) -> None:
        self._paths: tuple[tuple[str, str], ...] = ()  # (path, module name) of each file
        self._names: dict[str, tuple[str, ...]] = {}  # path -> the module names its imports run
        self._models: dict[str, FileModel] = {}  # path -> the model last seen (alive: ids stay unique)
        self._imports: Imports | None = None
        self.made = 0  # graphs made (the tests read it)

    def over(self, files: Sequence[FileModel], names_of: Callable[[FileModel], tuple[str, ...]],
             row_of: Callable[[FileModel, tuple[str, ...]], tuple[str, ...]]) -> Imports:
        """The graph of ``files`` (``names_of``: a model's imported module names; ``row_of``: the paths a file whose
        imports run those names imports directly)."""
        paths = tuple((f.path, f.module) for f in files)  # (a name imported is looked up by the files' module names)
        if self._imports is not None and paths == self._paths:
            edited = [f for f in files if self._models.get(f.path) is not f]
            if all(names_of(f) == self._names[f.path] for f in edited):
                self._models.update((f.path, f) for f in edited)
                return self._imports
        self._paths = paths
        self._models = {f.path: f for f in files}
        self._names = {f.path: names_of(f) for f in files}
        self._imports = Imports({f.path: row_of(f, self._names[f.path]) for f in files})
        self.made += 1
        return self._imports


class Imports:
    """One import graph: path -> the paths the file imports directly, with the walks through it made so far (a graph
    is never changed: an edit that changes imports makes another)."""

    def __init__(self, rows: dict[str, tuple[str, ...]]) -> None:
        self.rows = rows
        self._importers: dict[str, tuple[str, ...]] | None = None
        self._walks: dict[tuple[tuple[str, ...], bool], tuple[str, ...]] = {}  # (starts, reversed) -> the walk

    def importers(self, path: str) -> tuple[str, ...]:
        """The paths of the files that import ``path`` directly, in file order."""
        if self._importers is None:
            reverse: dict[str, list[str]] = {}
            for importer, imported in self.rows.items():
                for p in imported:
                    reverse.setdefault(p, []).append(importer)
            self._importers = {p: tuple(found) for p, found in reverse.items()}
        return self._importers.get(path, ())

    def walk(self, starts: tuple[str, ...], importers: bool = False) -> tuple[str, ...]:
        """``starts`` and every file the graph (``importers``: the graph reversed) leads to from one of them, each
        once."""
        key = (starts, importers)
        found = self._walks.get(key)
        if found is None:
            step = self.importers if importers else (lambda p: self.rows.get(p, ()))
            seen = dict.fromkeys(starts)
            stack = list(starts)
            while stack:
                for p in step(stack.pop()):
                    if p not in seen:
                        seen[p] = None
                        stack.append(p)
            found = self._walks[key] = tuple(seen)
        return found
