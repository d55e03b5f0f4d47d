"""``--report FILE.html``: the cold start as a picture, from the ``--confirm`` artifact (``ConfirmResult.to_json()``).

One self-contained page, no network, no library: hand-written SVG and a few lines of CSS.

- the timeline of the cold run: one row per module identity, in the order the builds started (builds run one
  after another show as a staircase), each bar split into code generation, LTO, native compiler and the rest;
  under pytest the rows are grouped by the test (node id and phase) that triggered each build;
- the findings, ranked by their seconds, each with its location and the edit that fixes it;
- the what-if savings as bars, with the noise band drawn around the saving.

Every number on the page is printed from the artifact as it is (rounded for display only where the element
carries the exact value in ``data-value``), so a test can compare the page with the JSON.
"""

from __future__ import annotations

import html
import json
from typing import Any

PARTS = (  # (field, label, colour): the order Module.load runs them in
    ("codegen_ms", "codegen", "#4e79a7"),
    ("lto_ms", "LTO", "#e15759"),
    ("native_ms", "native compiler", "#f28e2b"),
    ("other_ms", "other (hash, cache I/O, load)", "#bab0ac"),
)
ROW_H = 22
LABEL_W = 300
PLOT_W = 620
WIDTH = LABEL_W + PLOT_W + 60


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _s(ms: float | None) -> str:
    return "-" if ms is None else f"{ms / 1000.0:.2f}"


def _label(i: dict[str, Any]) -> str:
    bd = "" if i.get("block_dim") in (None, 1) else f"@{i['block_dim']}"
    h = str(i.get("hash") or "")[:7]
    status = "" if i.get("status") == "compiled" else f" ({i.get('status')})"
    return f"{i.get('module')} {h}{bd} {i.get('device')}{status}"


def _ticks(end_s: float) -> list[float]:
    if end_s <= 0:
        return [0.0]
    raw = end_s / 5
    step = next(s for s in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1e9)
                if s >= raw)
    out, t = [], 0.0
    while t <= end_s + 1e-9:
        out.append(round(t, 6))
        t += step
    return out


def timeline_svg(identities: list[dict[str, Any]]) -> str:
    """One row per identity, in start order; grouped by test when the builds came from pytest tests."""
    ids = sorted(identities, key=lambda i: (i.get("start_s") or 0.0, i.get("seq") or 0))
    if not ids:
        return '<p class="none">No module was loaded in the cold run.</p>'
    t0 = min(float(i.get("start_s") or 0.0) for i in ids)
    end = max(float(i.get("end_s") or 0.0) for i in ids) - t0
    scale = PLOT_W / end if end > 0 else 0.0
    rows: list[tuple[str, dict[str, Any] | None]] = []
    if any(i.get("test") for i in ids):
        groups: dict[str, list[dict[str, Any]]] = {}
        for i in ids:
            groups.setdefault(str(i.get("test") or "outside any test"), []).append(i)
        for test, members in groups.items():
            rows.append((test, None))
            rows += [(_label(i), i) for i in members]
    else:
        rows = [(_label(i), i) for i in ids]
    height = ROW_H * len(rows) + 30  # the rows, then the time axis
    out = [f'<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="timeline of the cold run">']
    axis_y = ROW_H * len(rows) + 8
    for t in _ticks(end):
        x = LABEL_W + t * scale
        out.append(f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{axis_y}" class="grid"/>')
        out.append(f'<text x="{x:.1f}" y="{axis_y + 14}" class="tick">{t:g} s</text>')
    for n, (label, row) in enumerate(rows):
        y = n * ROW_H + 4
        if row is None:
            out.append(f'<text x="4" y="{y + 14}" class="group" data-test="{_e(label)}">{_e(label)}</text>')
            continue
        i = row
        out.append(f'<g class="build" data-module="{_e(i.get("module"))}" data-hash="{_e(i.get("hash"))}" '
                   f'data-ms="{i.get("ms")}">')
        out.append(f'<text x="{LABEL_W - 6}" y="{y + 14}" class="label">{_e(label)}</text>')
        x = LABEL_W + (float(i.get("start_s") or 0.0) - t0) * scale
        parts = [(f, lab, col, float(i.get(f) or 0.0)) for f, lab, col in PARTS]
        if not any(v for *_, v in parts):  # no phase split recorded: the whole load as "other"
            parts = [("ms", "load", "#bab0ac", float(i.get("ms") or 0.0))]
        for field, lab, col, ms in parts:
            w = ms / 1000.0 * scale
            if ms <= 0:
                continue
            out.append(f'<rect x="{x:.2f}" y="{y}" width="{max(w, 0.5):.2f}" height="{ROW_H - 6}" fill="{col}" '
                       f'data-part="{field}" data-value="{ms}"><title>{_e(label)}: {_e(lab)} {_s(ms)} s</title></rect>')
            x += w
        out.append(f'<text x="{x + 4:.1f}" y="{y + 14}" class="secs" data-value="{i.get("ms")}">'
                   f'{_s(i.get("ms"))} s</text></g>')
    out.append("</svg>")
    legend = "".join(f'<span><i style="background:{col}"></i>{_e(lab)}</span>' for _, lab, col in PARTS)
    return "\n".join(out) + f'\n<p class="legend">{legend}</p>'


def whatif_svg(results: list[dict[str, Any]]) -> str:
    """Each measured candidate's saving as a bar, the noise band as a shaded range around its end."""
    measured = [r for r in results if r.get("saving_s") is not None]
    if not measured:
        return ""
    top = max([abs(r["saving_s"]) + (r.get("band_s") or 0.0) for r in measured] + [1e-9])
    scale = (PLOT_W - 140) / top  # room for the value after the longest bar
    height = ROW_H * len(measured) + 30
    out = [f'<svg class="whatif" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="what-if savings">']
    for n, r in enumerate(measured):
        y = n * ROW_H + 4
        saving, band = float(r["saving_s"]), float(r.get("band_s") or 0.0)
        w = max(saving, 0.0) * scale
        col = {"improved": "#59a14f", "regressed": "#e15759"}.get(str(r.get("verdict")), "#bab0ac")
        lo, hi = max(saving - band, 0.0) * scale, (saving + band) * scale
        out.append(f'<g class="candidate" data-what-if="{_e(r.get("what_if"))}">')
        out.append(f'<text x="{LABEL_W - 6}" y="{y + 14}" class="label">{_e(r.get("what_if"))}</text>')
        out.append(f'<rect x="{LABEL_W}" y="{y}" width="{max(w, 0.5):.2f}" height="{ROW_H - 6}" fill="{col}" '
                   f'data-value="{saving}"/>')
        out.append(f'<rect x="{LABEL_W + lo:.2f}" y="{y - 2}" width="{max(hi - lo, 1):.2f}" height="{ROW_H - 2}" '
                   f'class="band" data-band="{band}"/>')
        out.append(f'<text x="{LABEL_W + hi + 4:.1f}" y="{y + 14}" class="secs" data-value="{saving}">'
                   f'{saving:.2f} s ±{band:.2f} [{_e(r.get("verdict"))}]</text></g>')
    out.append("</svg>")
    return "\n".join(out)


def _findings(artifact: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for d in list(artifact.get("findings") or []) + list(artifact.get("runtime_findings") or []):
        c = d.get("confirm") or {}
        rows.append(d | {"_cost": c.get("cost_ms") or 0.0, "_verdict": c.get("verdict") or "-"})
    rows.sort(key=lambda d: (-d["_cost"], d["_verdict"] != "confirmed", d.get("path") or "", d.get("line") or 0))
    return rows


STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}
svg text{font:12px system-ui,sans-serif}.label{text-anchor:end}.group{font-weight:bold}
.grid{stroke:#eee}.tick{fill:#777;text-anchor:middle}.secs{fill:#333}.band{fill:#000;fill-opacity:.15}
.legend span{margin-right:14px}.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;
vertical-align:-1px}.edit{font-family:ui-monospace,monospace;font-size:12px;color:#0b5}.none{color:#777}
.kpi{display:flex;gap:28px}.kpi div b{display:block;font-size:20px}
"""


def render_html(artifact: dict[str, Any]) -> str:
    s = artifact.get("summary") or {}
    profile = s.get("profile") or {}
    ids = list(profile.get("identities") or [])
    totals = profile.get("totals") or {}
    kpis = [
        ("cold run", s.get("cold_wall_s"), "cold_wall_s"),
        ("warm run", s.get("warm_wall_s"), "warm_wall_s"),
        ("compile elapsed (cold - warm)", s.get("compile_elapsed_s"), "compile_elapsed_s"),
        ("in module loads", None if totals.get("module_ms") is None else totals["module_ms"] / 1000.0, "module_s"),
    ]
    out = ["<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
           "<title>warplint --confirm: where the cold start went</title>", f"<style>{STYLE}</style></head><body>",
           "<h1>Where the cold start went</h1>",
           f'<p>Command: <code>{_e(" ".join(artifact.get("command") or []))}</code>'
           + (f" &mdash; <b>run failed: {_e(artifact['failed'])}</b>" if artifact.get("failed") else "") + "</p>",
           '<div class="kpi">']
    for label, value, key in kpis:
        shown = "-" if value is None else f"{value:.2f} s"
        out.append(f'<div data-key="{key}" data-value="{"" if value is None else value}"><b>{shown}</b>'
                   f"{_e(label)}</div>")
    out.append("</div>")
    parts = ", ".join(f"{lab} {_s(totals.get(f))} s" for f, lab, _ in PARTS)
    out.append(f"<h2>Timeline of the cold run</h2><p>One row per module identity, in the order the builds "
               f"started: rows that follow each other like a staircase were built one after another. "
               f"Bars: {_e(parts)}.</p>")
    out.append(timeline_svg(ids))
    tests = profile.get("tests") or []
    if tests:
        out.append("<h2>Tests by build seconds</h2><table><tr><th>test</th><th>phase</th><th>builds</th><th>s</th>"
                   "<th>modules</th></tr>")
        for t in tests:
            out.append(f'<tr class="test"><td>{_e(t["test"])}</td><td>{_e(t["phase"])}</td>'
                       f'<td class="num">{t["builds"]}</td><td class="num" data-value="{t["ms"]}">{_s(t["ms"])}</td>'
                       f'<td>{_e(", ".join(t["modules"]))}</td></tr>')
        out.append("</table>")
    rows = _findings(artifact)
    out.append("<h2>Findings, most expensive first</h2>")
    if rows:
        out.append("<table><tr><th>seconds</th><th>verdict</th><th>where (the line to edit)</th><th>finding</th></tr>")
        for d in rows:
            edit = (d.get("data") or {}).get("edit")
            cost = d["_cost"]
            message = str(d.get("message") or "")
            if edit and message.endswith(f" Edit here: {edit}."):  # shown on its own line below
                message = message[: -len(f" Edit here: {edit}.")]
            out.append(
                f'<tr class="finding" data-code="{_e(d.get("code"))}"><td class="num" data-value="{cost}">'
                f'{_s(cost) if cost else "-"}</td><td>{_e(d["_verdict"])}</td>'
                f'<td>{_e(d.get("path"))}:{_e(d.get("line"))}</td><td><b>{_e(d.get("code"))}</b> {_e(d.get("name"))}: '
                f'{_e(message)}' + (f'<div class="edit">edit: {_e(edit)}</div>' if edit else "")
                + "</td></tr>")
        out.append("</table>")
    else:
        out.append('<p class="none">No findings.</p>')
    whatifs = list(artifact.get("what_if") or [])
    if whatifs:
        out.append("<h2>What-if: measured savings</h2><p>Each change re-ran the program cold on fresh caches; the bar "
                   "is the saving of compile elapsed time, the shaded range its noise band.</p>")
        out.append(whatif_svg(whatifs))
        other = [r for r in whatifs if r.get("saving_s") is None]
        if other:
            out.append("<ul>" + "".join(f"<li>{_e(r.get('what_if'))}: {_e(r.get('verdict'))} "
                                        f"{_e(r.get('note') or '')}</li>" for r in other) + "</ul>")
    # the artifact itself, for anyone who wants the exact numbers (and for the test that checks the page)
    data = json.dumps({"summary": {k: s.get(k) for k in ("cold_wall_s", "warm_wall_s", "compile_elapsed_s")},
                       "identities": ids, "what_if": [{k: r.get(k) for k in ("what_if", "saving_s", "band_s",
                                                                             "verdict")} for r in whatifs]})
    safe = data.replace("</", "<\\/")  # no "</script>" inside the block
    out.append(f'<script type="application/json" id="warplint-data">{safe}</script>')
    # a check that the page was laid out (a headless browser's DOM dump shows it): bars drawn with a width
    out.append("<script>addEventListener('load',()=>{document.body.dataset.renderedBars=[...document."
               "querySelectorAll('svg rect')].filter(e=>e.getBoundingClientRect().width>0).length})</script>")
    out.append("</body></html>")
    return "\n".join(out)


def write_report(path: str, artifact: dict[str, Any]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(render_html(artifact))
