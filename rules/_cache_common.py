"""Shared by the CS-2 (cache not reused) rules WC201-WC205: not a rule itself.

- where a statement runs only on request (``Project.opt_in``: a condition that reads the command line,
  the environment or a parameter, or a function only called that way), which these rules skip;
- where the cold start is chosen (``Project.cold_start_on_purpose``: benchmark code, test code no test runs or
  that sets the setting back once done, a function that times the cold build it asks for): those findings are
  *deliberate* (reported only with `report-deliberate`);

Whether a path is a fresh temporary or timestamped directory is a semantic fact:
`warplint.semantic.facts_paths`.
"""

from __future__ import annotations

from warplint.index import Project
from warplint.model import Context, FileModel
from warplint.semantic.events import ConfigAssignment


def gate_reason(file: FileModel, ctx: Context, project: Project) -> str | None:
    """Why a statement runs only on request (``Project.opt_in``), or None."""
    return project.opt_in(file, ctx)


def made_gate_reason(project: Project, assignment: ConfigAssignment) -> str | None:
    """``gate_reason`` of a ``wp.config`` assignment, or of a call in the chain that decides its value
    (``ConfigAssignment.site``: `if args.rebuild: set_cache(False)`)."""
    reason = gate_reason(assignment.file, assignment.ctx, project)
    site = assignment.site
    while reason is None and site is not None:
        if site.call is not None:
            reason = gate_reason(site.file, site.call.ctx, project)
        site = site.parent
    return reason


def deliberate_reason(project: Project, file: FileModel, ctx: Context, setting: str | None = None) -> str | None:
    """Why a cold start written at ``ctx`` is deliberate (``Project.cold_start_on_purpose``), or None."""
    return project.cold_start_on_purpose(file, ctx, setting)
