"""Render a run's ``metrics.json`` into one self-contained HTML file (no network needed).

``metrics.json`` holds a list of *sections*; each has a ``kind`` that selects a renderer::

    {"title": "...", "simulated": false,
     "sections": [{"kind": "confidence", "title": "...", "description": "...",
                   "results": {NAME: RESULT, ...}}, ...]}

Built-in kinds: ``confidence`` (results of :func:`confeval.evaluate.evaluate_confidence`) and
``agreement`` (:func:`confeval.evaluate.evaluate_agreement`). A suite adds its own kind with
:func:`register_section` in ``confeval/report/sections/<suite>.py``.

A report renders what it can. A chart that cannot be drawn (:func:`chart`) leaves one line in
its place naming it and why, and its section's tables still render; a section whose results
its renderer cannot read is replaced by a line saying so. Each is a :class:`ReportProblem`,
returned by :func:`render_report_checked` (and by :func:`confeval.report.publish`) so that a
command can name them on stderr and end with exit status 3 (report incomplete).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from .figures import Panels, confusion_figure, reliability_figure, risk_coverage_figure
from .registries import SECTION_RENDERERS
from .verdicts import section_verdicts

__all__ = ["SECTION_RENDERERS", "ReportProblem", "chart", "check_metrics", "metric_table",
           "register_section", "render_report", "render_report_checked"]


register_section = SECTION_RENDERERS.register
"""Decorator: register ``fn(section) -> html`` as the renderer of a section kind."""


def esc(value: Any) -> str:
    """HTML-escaped text of any value."""
    return html.escape(str(value))


def short_name(name: str) -> str:
    """A result key for display: a file path becomes 'folder/file' without its extension."""
    text = str(name)
    if "/" not in text and "." not in text:
        return text
    parts = text.replace("\\", "/").split("/")
    stem = parts[-1]
    for ext in (".csv.gz", ".jsonl.gz", ".csv", ".jsonl", ".tsv", ".parquet", ".ndjson"):
        if stem.endswith(ext):
            stem = stem[: -len(ext)]
            break
    return "/".join([*parts[-2:-1], stem]) if len(parts) > 1 else stem


def scroll(table_html: str) -> str:
    """A wide table in a horizontally scrolling box."""
    return f"<div class='scroll'>{table_html}</div>"


def fmt(value: Any, digits: int = 4) -> str:
    """A cell value: "–" for None and NaN (never the word "nan" shown as a number),
    thousands separators for ints, ``digits`` decimals for floats, escaped text otherwise."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return esc(value)


def value_with_ci(value: Any, ci: Mapping[str, Any] | None) -> str:
    """A cell: the value, and its 95% interval beneath when there is one."""
    cell = fmt(value)
    if cell != "–" and ci and _defined(ci.get("low")) and _defined(ci.get("high")):
        cell += interval(value, ci["low"], ci["high"])
    return cell


OUTSIDE_MARK = "<sup class='outside' title='the value lies outside its interval'>†</sup>"


def interval(value: Any, low: Any, high: Any) -> str:
    """A value's 95% interval, beneath it in its cell; marked † when the value lies outside
    it, which the page's footer explains (a binned ECE near 0 is biased upward on
    resamples), so that a reader does not take it for a mistake."""
    outside = _defined(value) and isinstance(value, (int, float)) and (
        (_defined(low) and value < low) or (_defined(high) and value > high))
    return f"<div class='ci'>[{fmt(low)}, {fmt(high)}]{OUTSIDE_MARK if outside else ''}</div>"


def _defined(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def metric_table(results: Mapping[str, Mapping], columns: list[tuple[str, str]],
                 name_header: str = "judge") -> str:
    """HTML table: one row per result, one column per (key, header); CIs shown under values."""
    head = "".join(f"<th>{esc(h)}</th>" for _, h in columns)
    rows = []
    for name, res in results.items():
        cells = []
        for key, _ in columns:
            value = res.get(key)
            ci = (res.get("ci") or {}).get(key)
            extra = (interval(value, ci["low"], ci["high"])
                     if ci and ci.get("low") is not None else "")
            cells.append(f"<td>{fmt(value)}{extra}</td>")
        rows.append(f"<tr><th scope='row'>{esc(short_name(name))}</th>{''.join(cells)}</tr>")
    return scroll(f"<table><thead><tr><th>{esc(name_header)}</th>{head}</tr></thead>"
                  f"<tbody>{''.join(rows)}</tbody></table>")


def _section_notes(results: Mapping[str, Any]) -> str:
    """What every section says under its own content, whatever its kind: each result's
    excluded rows by reason and its warnings (a small calibration split, ...)."""
    notes = []
    for name, res in results.items():
        if not isinstance(res, Mapping):
            continue
        excl = res.get("excluded") or {}
        if excl:
            detail = ", ".join(f"{esc(k)}: {v}" for k, v in excl.items())
            notes.append(f"<li>{esc(short_name(name))}: {sum(excl.values())} excluded "
                         f"({detail})</li>")
        notes += [f"<li>{esc(short_name(name))}: warning: {esc(w)}</li>"
                  for w in res.get("warnings") or []]
    return f"<ul class='excluded'>{''.join(notes)}</ul>" if notes else ""


def _run_notes(metrics: Mapping[str, Any]) -> str:
    """What a run as a whole says: items that failed, records not asked, warnings."""
    notes = []
    if metrics.get("failed_items"):
        notes.append(f"<li>{esc(metrics['failed_items'])} item(s) failed after retries (no "
                     "record; run the command again to retry them)</li>")
    for what, counts in (("records not asked", metrics.get("excluded_records")),
                         ("rows left out of the data before any model call",
                          metrics.get("excluded_at_load"))):
        if counts:
            detail = ", ".join(f"{esc(k)}: {v}" for k, v in counts.items())
            notes.append(f"<li>{esc(what)}: {detail}</li>")
    notes += [f"<li>warning: {esc(w)}</li>" for w in metrics.get("warnings") or []]
    return f"<ul class='excluded'>{''.join(notes)}</ul>" if notes else ""


READABLE_SHARE = 0.8
"""A single chart is never shown narrower than this share of its drawn width: its smallest
text (6 pt at 110 dpi, 9 px) stays at 7 px or more. On a phone a wider chart (a forest plot or
p-value heat map of many models) scrolls sideways in its own box instead of shrinking: a
chart one reads by its labels is of no use shrunk to fit, and a box that scrolls cuts
nothing. (A figure of several panels is drawn one PNG per panel instead, each of which fits
a phone: see :func:`_panels`.)"""

MIN_CHART_PX = 300
"""...and never narrower than this many CSS pixels (or its drawn width, when smaller)."""


def png_width(uri: str) -> int | None:
    """The pixel width of a ``data:image/png;base64,`` URI's image (its IHDR chunk), None
    for anything else."""
    import base64

    prefix = "data:image/png;base64,"
    if not uri.startswith(prefix):
        return None
    try:
        head = base64.b64decode(uri[len(prefix):len(prefix) + 32])
    except ValueError:
        return None
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return int.from_bytes(head[16:20], "big")


def readable_width(drawn: int) -> int:
    """The narrowest a chart drawn ``drawn`` pixels wide is shown (see
    :data:`READABLE_SHARE`)."""
    return min(drawn, max(MIN_CHART_PX, round(drawn * READABLE_SHARE)))


def _img(uri: str, alt: str) -> str:
    drawn = png_width(uri)
    style = f" style='min-width:{readable_width(drawn)}px'" if drawn else ""
    return f"<figure><img src='{uri}' alt='{esc(alt)}'{style}></figure>"


def _panels(panels: Panels, alt: str) -> str:
    """A figure of several panels, one ``<img>`` each and its legend's after them, side by
    side as far as the screen's width allows, wrapping onto further rows: a phone shows one
    panel a row at (nearly) its drawn size, a wide screen three a row, the legend beside the
    last when there is room. Each image is at most as wide as the screen (``max-width:100%``
    in the page's CSS): never cut, nor scrolled out of sight."""
    imgs = "".join(f"<img class='{'legend' if name == 'legend' else 'panel'}' src='{uri}' "
                   f"alt='{esc(alt)}: {esc(name)}'>" for name, uri in panels)
    return f"<figure class='panels' aria-label='{esc(alt)}'>{imgs}</figure>"


@dataclass(frozen=True)
class ReportProblem:
    """What a report could not show: the chart ``chart`` of a section, or (``chart`` None)
    the whole section; ``reason`` is the error, on one line."""

    section: str
    chart: str | None
    reason: str

    def __str__(self) -> str:
        what = f"chart '{self.chart}' not drawn" if self.chart else "section not rendered"
        return f"report incomplete: section '{self.section}': {what} ({self.reason})"


_CHART_FAILURES: ContextVar[list[tuple[str, str]] | None] = ContextVar("chart_failures",
                                                                        default=None)
"""(chart, reason) of each chart of the section being rendered that could not be drawn;
set by :func:`render_report_checked` around each section (section renderers take only the
section, so the failures travel beside them)."""


def _reason(exc: BaseException) -> str:
    """The error on one line: its type, and its message when it has one."""
    message = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def chart(alt: str, draw: Callable[..., str], *args: Any, **kwargs: Any) -> str:
    """The figure ``draw(*args, **kwargs)`` returns (a data URI, or a :class:`Panels`),
    described by ``alt``, or, when drawing it fails, one line in its place naming the chart
    and why. A chart is not worth its section: the tables around it still render, and the
    failure is kept for the report's caller (:func:`render_report_checked`)."""
    try:
        uri = draw(*args, **kwargs)
    except Exception as exc:
        reason = _reason(exc)
        failures = _CHART_FAILURES.get()
        if failures is not None:
            failures.append((alt, reason))
        return (f"<p class='excluded chart-missing'>Chart not drawn: {esc(alt)} "
                f"({esc(reason)}).</p>")
    return _panels(uri, alt) if isinstance(uri, Panels) else _img(uri, alt)


def _figure_of(results: Mapping[str, Mapping], key: str, heading: str, draw) -> str:
    """A heading and one figure drawn from ``result[key]`` of every result that has it, each
    panel or line named as the tables and verdicts name it (:func:`short_name`), unless two
    would then share a name."""
    data = {name: r[key] for name, r in results.items() if r.get(key)}
    if len({short_name(name) for name in data}) == len(data):
        data = {short_name(name): value for name, value in data.items()}
    return f"<h3>{esc(heading)}</h3>" + chart(heading.lower(), draw, data) if data else ""


@register_section("confidence")
def render_confidence(section: Mapping[str, Any]) -> str:
    """Calibration and selective-prediction metrics per result, reliability diagrams and
    risk-coverage curves."""
    results = section["results"]
    cols = [("n", "n"), ("accuracy", "accuracy"), ("mean_confidence", "mean conf."),
            ("ece", "ECE"), ("mce", "MCE"), ("brier", "Brier"), ("auroc", "AUROC"),
            ("auarc", "AUARC"), ("aurc", "AURC"), ("prr", "PRR"), ("rce", "RCE")]
    parts = ["<h3>Calibration and ranking (95% intervals beneath the values)</h3>",
             metric_table(results, cols, section.get("name_header", "judge"))]
    parts.append(_figure_of(results, "reliability", "Reliability diagrams", reliability_figure))
    parts.append(_figure_of(results, "risk_coverage", "Risk–coverage curves",
                            risk_coverage_figure))
    parts.append(_one_line(results, "risk_coverage"))
    return "".join(parts)


def _one_line(results: Mapping[str, Mapping], key: str) -> str:
    """A note naming the results whose curves ``result[key]`` (``coverage`` and ``risk``)
    are the same to four decimals: drawn on one axis, the last one drawn hides the others."""
    lines: dict[tuple, list[str]] = {}
    for name, r in results.items():
        curve = r.get(key)
        if curve:
            points = tuple(round(float(v), 4) for axis in ("coverage", "risk")
                           for v in curve.get(axis) or ())
            lines.setdefault(points, []).append(short_name(name))
    shared = [", ".join(names) for names in lines.values() if len(names) > 1]
    if not shared:
        return ""
    return ("<p class='muted'>Drawn on one line, so only the last is seen: "
            f"{esc('; '.join(shared))} (the same curve: their confidences order the answers "
            "alike).</p>")


@register_section("agreement")
def render_agreement(section: Mapping[str, Any]) -> str:
    """Judge-vs-human agreement per result, bias by ground-truth level, overconfidence,
    confusion matrices and top-probability reliability."""
    results = section["results"]
    header = section.get("name_header", "judge")
    cols = [("n", "n"), ("pearson", "Pearson"), ("spearman", "Spearman"),
            ("kendall", "Kendall τ"), ("accuracy", "exact acc."), ("within1", "±1 acc."),
            ("mae", "MAE"), ("bias", "bias"), ("top_prob_ece", "top-prob ECE")]
    parts = ["<h3>Agreement with the reference scores (95% intervals beneath)</h3>",
             metric_table(results, cols, header)]
    levels = sorted({lv for r in results.values() for lv in r.get("bias_by_level", {})},
                    key=float)
    if levels:
        head = "".join(f"<th>GT {float(lv):g}</th>" for lv in levels)
        rows = "".join(
            f"<tr><th scope='row'>{esc(name)}</th>" + "".join(
                f"<td>{fmt((r['bias_by_level'].get(lv) or {}).get('bias'))}</td>"
                for lv in levels) + "</tr>"
            for name, r in results.items())
        parts.append("<h3>Signed bias by ground-truth level</h3>"
                     + scroll(f"<table><thead><tr><th>{esc(header)}</th>{head}</tr></thead>"
                              f"<tbody>{rows}</tbody></table>"))
    over = {k: r["overconfidence"] for k, r in results.items() if r.get("overconfidence")}
    if over:
        ths = sorted({t for o in over.values() for t in o}, key=float)
        parts.append("<h3>Share of items whose top score probability exceeds a threshold</h3>"
                     + metric_table({k: {t: o.get(t) for t in ths} for k, o in over.items()},
                                    [(t, f"top prob > {t}") for t in ths], header))
    parts.append(_figure_of(results, "confusion", "Confusion matrices", confusion_figure))
    parts.append(_figure_of(results, "reliability", "Top-probability reliability",
                            reliability_figure))
    return "".join(parts)


def _mean_std(value: Any) -> str:
    if isinstance(value, dict) and "mean" in value:
        if value["mean"] is None:
            return "–"
        return f"{value['mean']:.4f}<div class='ci'>±&nbsp;{value.get('std') or 0:.4f}</div>"
    return fmt(value)


def _table(head: list[str], rows: list[list[str]], first: str = "") -> str:
    h = "".join(f"<th>{esc(x)}</th>" for x in [first, *head])
    body = "".join("<tr><th scope='row'>" + r[0] + "</th>" + "".join(f"<td>{c}</td>"
                                                                      for c in r[1:]) + "</tr>"
                   for r in rows)
    return scroll(f"<table><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>")


def verdict_list(section: Mapping[str, Any]) -> str:
    """Every result's verdict (:func:`confeval.report.verdicts.section_verdicts`) as a list,
    each led by the result's name; empty when the section's kind has no verdict."""
    items = "".join(f"<li><strong>{esc(short_name(name))}</strong>: {esc(sentence)}</li>"
                    for name, sentence in section_verdicts(section).items())
    return f"<ul class='verdict'>{items}</ul>" if items else ""


def _contents(sections: list) -> str:
    """The report's opening: every section's title, linked, with its verdicts beneath. A
    section whose verdicts cannot be computed (a foreign document) is listed without them;
    its own place in the page says why. A page of one section has none: its verdicts open
    the section just below, and a list of one would only say them twice."""
    if len(sections) < 2:
        return ""
    entries = []
    for i, section in enumerate(sections):
        try:
            verdicts = verdict_list(section)
        except Exception:   # named where the section is rendered (_render_section)
            verdicts = ""
        entries.append(f"<li><a href='#s{i}'>{esc(section.get('title', section['kind']))}"
                       f"</a>{verdicts}</li>")
    return f"<ol class='contents'>{''.join(entries)}</ol>"


_ECE = re.compile(r"\bECE\b")
_INTERVAL = re.compile(r"class='ci'|\[-?\d+(?:\.\d+)?, -?\d+(?:\.\d+)?\]")


def _footer(body: str) -> str:
    """The page's closing note: how intervals are made (on a page that shows one), and —
    only on a page that shows an ECE — why binned ECE's interval can lie above its value."""
    note = "Generated by confeval."
    if _INTERVAL.search(body):
        note += " Intervals are 95% bootstrap percentile intervals."
    if OUTSIDE_MARK in body or "]†" in body:   # a table cell's mark, or a verdict's
        note += (" † marks a value outside its own interval, which happens where resampling "
                 "biases the metric.")
    if _ECE.search(body):
        note += (" Binned ECE is biased upward on resamples (duplicated rows add noise to every "
                 "bin), so for a well-calibrated judge its interval can lie above the point "
                 "estimate.")
    return f"<p class='muted'>{note}</p>"


PAGE_MARGIN_PX = 48
"""What a screen gives the page beyond a table's width: the page's 1rem padding either side,
and room for a scroll bar."""

STACK_STEP_PX, STACK_WIDEST_PX, NARROWEST_SCREEN_PX = 40, 1000, 320
"""Screen widths below which a table is stacked are multiples of this step, and at most this
(a table too wide even for that screen scrolls in its box there); a table that fits the
narrowest screen in use is never stacked."""

_CHAR_PX, _SMALL_CHAR_PX, _CELL_PAD_PX = 8.3, 6.9, 19
"""A character of a table cell (0.86rem, about 0.6em a character), of an interval beneath a
value (0.72rem), and a cell's padding and border, in CSS pixels: the estimate errs wide."""

_TABLE = re.compile(r"<table(?P<attrs>[^>]*)>(?P<inner>.*?)</table>", re.S)
_ROW = re.compile(r"<tr>(.*?)</tr>", re.S)
_CELL = re.compile(r"<(?P<tag>t[hd])(?P<attrs>[^>]*)>(?P<inner>.*?)</(?P=tag)>", re.S)
_TAG = re.compile(r"<[^>]+>")
_BREAK = re.compile(r"[ \t\n]+|(?<=-)")   # where a line may wrap (not at a no-break space)


def _text(fragment: str) -> str:
    return html.unescape(_TAG.sub("", fragment))


def _cell_min_width(inner: str) -> float:
    """The narrowest a cell can be: its longest unbreakable word, a line under a ``<div>``
    (an interval) in the small type."""
    widest = 0.0
    for k, piece in enumerate(inner.split("<div")):
        text = _text(piece if k == 0 else "<div" + piece)
        longest = max((len(w) for w in _BREAK.split(text)), default=0)
        widest = max(widest, longest * (_SMALL_CHAR_PX if k else _CHAR_PX))
    return widest + _CELL_PAD_PX


def table_min_width(table_html: str) -> float:
    """An estimate of the narrowest a rendered ``<table>`` can be, in CSS pixels: the sum over
    its columns of each column's widest unbreakable cell."""
    columns: dict[int, float] = {}
    for row in _ROW.findall(table_html):
        for i, cell in enumerate(_CELL.finditer(row)):
            columns[i] = max(columns.get(i, 0.0), _cell_min_width(cell["inner"]))
    return sum(columns.values())


def stack_below(table_html: str) -> int:
    """The screen width, in CSS pixels, below which ``table_html`` would be cut at the edge of
    its box: its narrowest (:func:`table_min_width`) and the page's margins, rounded up to
    :data:`STACK_STEP_PX`, at most :data:`STACK_WIDEST_PX`."""
    need = table_min_width(table_html) + PAGE_MARGIN_PX
    return min(STACK_WIDEST_PX, math.ceil(need / STACK_STEP_PX) * STACK_STEP_PX)


def _stacked(table: re.Match, below: int) -> str:
    """``table`` marked to stack on a screen narrower than ``below`` pixels (class
    ``stack-<below>``): every cell but a row's first header labelled with its column's header
    (``data-label``), a data cell's content in one box (``span.v``) beside the label."""
    inner = table["inner"]
    head = re.search(r"<thead>\s*<tr>(.*?)</tr>", inner, re.S)
    start, end = inner.find("<tbody>"), inner.rfind("</tbody>")
    if head is None or start < 0 or end < 0:
        return table[0]
    labels = [" ".join(_text(c["inner"]).split()) for c in _CELL.finditer(head[1])]

    def row(match: re.Match) -> str:
        cells = []
        for i, cell in enumerate(_CELL.finditer(match[1])):
            if (i == 0 and cell["tag"] == "th") or i >= len(labels):
                cells.append(cell[0])
                continue
            inner = (cell["inner"] if cell["tag"] == "th"   # a name: one line of text
                     else f"<span class='v'>{cell['inner']}</span>")
            cells.append(f"<{cell['tag']}{cell['attrs']} data-label='{esc(labels[i])}'>"
                         f"{inner}</{cell['tag']}>")
        return "<tr>" + "".join(cells) + "</tr>"

    body = _ROW.sub(row, inner[start:end])
    attrs, mark = table["attrs"], f"stack-{below}"
    named = re.search(r"class='([^']*)'", attrs)
    attrs = (f"{attrs[:named.end(1)]} {mark}{attrs[named.end(1):]}" if named
             else f"{attrs} class='{mark}'")
    return f"<table{attrs}>{inner[:start]}{body}{inner[end:]}</table>"


_STACK_RULES = """{t}{{width:100%;overflow-x:visible}} {t} thead{{display:none}}
{t} caption{{display:block}} {t} tbody,{t} tr{{display:block}}
{t} tr{{border:1px solid #dde3ee;margin:0 0 .6rem}} {t} tbody th,{t} td{{display:block;border:0}}
{t} [data-label]{{display:flex;justify-content:space-between;gap:.8rem;text-align:left;
border-top:1px solid #eef1f6;background:none}}
{t} [data-label]::before{{content:attr(data-label);font-weight:600}} {t} .v{{text-align:right}}"""


def stack_css(below: int) -> str:
    """The CSS that stacks the tables marked ``stack-<below>`` on a screen narrower than
    ``below`` pixels: one block per row under the row's name, each cell beside its column's
    header, the header row hidden."""
    rules = _STACK_RULES.format(t=f"table.stack-{below}")
    return f"@media (max-width:{below - 1}px){{\n{rules}\n}}\n"


def stack_wide_tables(page: str) -> str:
    """``page`` with every table that would be cut on a narrow screen shown stacked there
    instead (:func:`stack_below`, :func:`stack_css`; the rules go into the page's
    ``<style>``); on a wider screen every table is unchanged. The page's own tables are
    regular (a ``<thead>`` of one row, no spans), as every renderer writes them."""
    widths: set[int] = set()

    def mark(match: re.Match) -> str:
        below = stack_below(match[0])
        if below <= NARROWEST_SCREEN_PX:
            return match[0]
        stacked = _stacked(match, below)
        if stacked != match[0]:
            widths.add(below)
        return stacked

    page = _TABLE.sub(mark, page)
    css = "".join(stack_css(w) for w in sorted(widths, reverse=True))
    return page.replace("</style>", css + "</style>", 1) if css else page


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:1150px;color:#1d2330;padding:0 1rem}
h1{margin-bottom:.2rem} h2{border-bottom:2px solid #dde3ee;padding-bottom:.3rem;margin-top:2.2rem}
h3{margin-top:1.4rem;font-size:1.02rem}
table{border-collapse:collapse;margin:.8rem 0;font-size:.86rem}
th,td{border:1px solid #dde3ee;padding:.3rem .55rem;text-align:right;vertical-align:top}
thead th{background:#f3f6fb} tbody th{text-align:left;background:#fafbfd}
.ci{color:#6b7385;font-size:.72rem} .muted{color:#6b7385;font-size:.85rem}
.badge{display:inline-block;background:#b3261e;color:#fff;border-radius:4px;padding:.1rem .5rem;
font-size:.8rem;font-weight:600;letter-spacing:.03em}
.scroll{overflow-x:auto;max-width:100%} figure{margin:.6rem 0} img{max-width:100%}
table{display:block;max-width:100%;overflow-x:auto;width:max-content}
figure{overflow-x:auto;max-width:100%}
figure.panels{display:flex;flex-wrap:wrap;align-items:flex-start;gap:.4rem 1rem;overflow-x:visible}
figure.panels img{max-width:100%;height:auto} figure.panels img.legend{align-self:center}
ul.verdict{margin:.4rem 0 .8rem;padding-left:1.2rem} ul.verdict li{margin:.2rem 0}
ol.contents ul.verdict{font-size:.9rem;margin:.2rem 0 .5rem}
ul.excluded{font-size:.82rem;color:#8a4b08} caption{text-align:left;padding:.2rem 0}
details{margin:.6rem 0;font-size:.82rem} pre{background:#f6f8fa;padding:.6rem;overflow:auto}
.nowrap{white-space:nowrap}
/* a chart that scrolls sideways fades out at the edge that has more: its scroll position
   drives --cue (a scroll timeline: only a box that can scroll has one), 40px while there is
   more to the right, 0 at the end; a browser without scroll timelines shows the chart
   unfaded, cut at the box's edge */
@property --cue{syntax:'<length>';inherits:false;initial-value:0px}
@keyframes cue{0%{--cue:40px}92%{--cue:40px}100%{--cue:0px}}
@supports (animation-timeline:scroll()){figure:not(.panels){animation:cue linear both;
animation-timeline:scroll(self inline);
-webkit-mask-image:linear-gradient(to left,transparent,#000 var(--cue));
mask-image:linear-gradient(to left,transparent,#000 var(--cue))}}
"""


def check_metrics(metrics: Any) -> None:
    """A :class:`ValueError` naming what is wrong when ``metrics`` is not a metrics document
    (an object whose ``sections`` is a list of objects, each with a text ``kind`` and an
    object ``results``)."""
    if not isinstance(metrics, Mapping):
        raise ValueError(f"metrics must be a JSON object, not {type(metrics).__name__}")
    sections = metrics.get("sections", [])
    if not isinstance(sections, list):
        raise ValueError("metrics 'sections' must be a list")
    for i, section in enumerate(sections):
        if not isinstance(section, Mapping) or not isinstance(section.get("kind"), str):
            raise ValueError(f"metrics section {i} must be an object with a text 'kind'")
        if not isinstance(section.get("results", {}), Mapping):
            raise ValueError(f"metrics section {i} ('{section['kind']}'): 'results' must be an "
                             "object")


def render_report(metrics: Mapping[str, Any], run_info: Mapping[str, Any] | None = None) -> str:
    """Return the full HTML document for a run's metrics (and its ``run.json``, if known);
    what it could not show is said in the page (:func:`render_report_checked` also returns
    it)."""
    return render_report_checked(metrics, run_info)[0]


def render_report_checked(metrics: Mapping[str, Any], run_info: Mapping[str, Any] | None = None
                          ) -> tuple[str, list[ReportProblem]]:
    """The full HTML document for a run's metrics (and its ``run.json``, if known), and what
    it could not show, in page order (empty when the report is complete).

    A chart that cannot be drawn is named in its place and its section's tables still render;
    a section whose results a renderer cannot read (a hand-edited or foreign metrics.json) is
    shown as such, with the reason. Neither fails the whole report."""
    import json

    check_metrics(metrics)

    title = metrics.get("title", "confeval report")
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
             f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{esc(title)}</h1>"]
    if metrics.get("simulated"):
        parts.append("<p><span class='badge'>SIMULATED DATA</span> <span class='muted'>"
                     "Records generated by confeval's documented simulator "
                     "(<code>confeval simulate</code>), not by a real model.</span></p>")
    if metrics.get("note"):
        parts.append(f"<p class='muted'>{esc(metrics['note'])}</p>")
    parts.append(_run_notes(metrics))
    parts.append(_contents(metrics.get("sections", [])))
    problems: list[ReportProblem] = []
    body_start = len(parts)
    for i, section in enumerate(metrics.get("sections", [])):
        renderer = SECTION_RENDERERS.get(section["kind"])
        badge = (" <span class='badge'>SIMULATED</span>" if section.get("simulated")
                 and not metrics.get("simulated") else "")
        parts.append(f"<h2 id='s{i}'>{esc(section.get('title', section['kind']))}{badge}</h2>")
        if renderer is None:
            if section.get("description"):
                parts.append(f"<p class='muted'>{esc(section['description'])}</p>")
            parts.append(f"<p>No renderer for section kind {esc(section['kind'])!s}; "
                         "raw results:</p><pre>"
                         f"{esc(json.dumps(section.get('results'), indent=1)[:20000])}</pre>")
        else:
            body, found = _render_section(renderer, section)
            parts.append(body)
            problems += found
    footer = _footer("".join(parts[body_start:]))
    if run_info:
        parts.append("<details><summary>Run configuration and versions</summary><pre>"
                     f"{esc(json.dumps(run_info, indent=2))}</pre></details>")
    parts.append(footer + "</body></html>")
    return stack_wide_tables("".join(parts)), problems


def _render_section(renderer: Callable[[Mapping[str, Any]], str], section: Mapping[str, Any]
                    ) -> tuple[str, list[ReportProblem]]:
    """One section's HTML and what it could not show: its charts not drawn, or the whole
    section when its renderer fails (a foreign document: said in its place)."""
    title = str(section.get("title", section["kind"]))
    failures: list[tuple[str, str]] = []
    token = _CHART_FAILURES.set(failures)
    described = (f"<p class='muted'>{esc(section['description'])}</p>"
                 if section.get("description") else "")
    try:   # the verdicts open the section, then what it is, then its tables and charts
        body = (verdict_list(section) + described + renderer(section)
                + _section_notes(section.get("results") or {}))
    except Exception as exc:
        reason = _reason(exc)
        return (f"{described}<p class='excluded'>This section could not be rendered "
                f"({esc(reason)}).</p>", [ReportProblem(title, None, reason)])
    finally:
        _CHART_FAILURES.reset(token)
    return body, [ReportProblem(title, alt, reason) for alt, reason in failures]
