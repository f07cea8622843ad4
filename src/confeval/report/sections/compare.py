"""The report section of ``confeval compare``: the verdict per metric (opened by the report,
:func:`confeval.report.verdicts.compare_verdict`), the paper table (models by metrics, group
letters), then per metric the ranked table with intervals and rank intervals, the pairs' table
(difference with its interval, p-value, Holm-adjusted p-value and test: every pair for up to
:data:`ALL_PAIRS` pairs, else each model against the next ranked), a forest plot and a heatmap
of the Holm-adjusted pairwise p-values in bins of the conventional levels, and the
comparison's warnings. Model names longer than :data:`~confeval._text.NAME_WIDTH` are
shortened, whole in each row's tooltip (``title``), so a page grows with a name's length only
by those tooltips."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise
from typing import Any

from ..._text import display_name, display_names
from ...metrics.compare import direction_arrow, direction_text
from ..figures import forest_figure, pvalue_heatmap
from ..html import chart, esc, fmt, interval, register_section, scroll
from ..verdicts import SIGNIFICANCE, TEST_NAMES

__all__ = ["ALL_PAIRS", "render_compare"]

_TESTS = TEST_NAMES

ALL_PAIRS = 10
"""Pairs of a metric shown whole in the report's pairs table (five models); with more, the
table shows each model against the next ranked (every pair is in metrics.json)."""


@register_section("compare")
def render_compare(section: Mapping[str, Any]) -> str:
    """The whole comparison: summary line, paper table, per-metric tables and figures; for
    ``--suite auto`` the trust cards, then each suite's comparison."""
    doc = section["results"]
    if "suites" in doc:
        parts = [f"<h3>Trust cards</h3>{_cards(doc.get('cards') or {})}"]
        for suite, sub in doc["suites"].items():
            parts.append(f"<h3>{esc(suite)} suite</h3>{_render_one(sub)}")
        if doc.get("skipped"):
            parts.append("<p class='muted'>Not compared (runs of one model only): "
                         + esc("; ".join(f"{s}: {', '.join(map(display_name, m))}"
                                         for s, m in doc["skipped"].items())) + "</p>")
        return "".join(parts)
    return _render_one(doc)


def _name_cell(name: str, shown: str) -> str:
    """A model's name as a row header: shortened, whole in its tooltip when shortened."""
    title = f" title='{esc(name)}'" if shown != name else ""
    return f"<th scope='row'{title}>{esc(shown)}</th>"


def _cards(cards: Mapping[str, Mapping]) -> str:
    """One card per model: each aspect's value, interval, rank among the models compared on
    it, and where it comes from."""
    out = []
    shown = display_names(cards)
    for model, card in cards.items():
        rows = "".join(
            f"<tr><th scope='row'>{esc(aspect)}</th><td>{fmt(e['value'])}"
            f"<div class='ci'>[{fmt(e['low'])}, {fmt(e['high'])}]</div></td>"
            f"<td>#{e['rank']} of {e['of']} <span class='muted nowrap'>{_rank_span(e)}</span></td>"
            f"<td>{esc(e['group'] or '–')}</td>"
            f"<td class='muted'>{esc(e['suite'])}: {esc(e['metric'])} "
            f"({direction_arrow(e)})</td></tr>"
            for aspect, e in card.items())
        title = f" title='{esc(model)}'" if shown[model] != model else ""
        out.append(f"<div class='card'><h4{title}>{esc(shown[model])}</h4><table><thead><tr>"
                   "<th>aspect</th>"
                   "<th>value [95%]</th><th>rank [95%]</th><th>group</th><th>from</th></tr>"
                   f"</thead><tbody>{rows}</tbody></table></div>")
    return "".join(out) or "<p>No card.</p>"


def _render_one(doc: Mapping[str, Any]) -> str:
    metrics = doc.get("metrics") or {}
    if not metrics:
        return "<p>No results.</p>"
    lacking = "; ".join(f"{esc(display_name(n))} lacks {c:,} item{'' if c == 1 else 's'} "
                        "the others have" for n, c in doc.get("not_shared", {}).items() if c)
    parts = [f"<p>{len(doc['models'])} models of the {esc(doc.get('suite', ''))} suite on "
             f"{doc.get('n_items_shared', 0):,} shared items"
             + (f" ({lacking})" if lacking else "") + ". Models sharing a letter are "
             "separated by no Holm-adjusted test at the chosen level.</p>", _paper_table(doc)]
    if doc.get("warnings"):
        parts.append("<ul class='excluded'>" + "".join(
            f"<li>warning: {esc(w)}</li>" for w in doc["warnings"]) + "</ul>")
    alpha = (doc.get("options") or {}).get("significance") or SIGNIFICANCE
    for metric, table in metrics.items():
        tests = sorted({_TESTS.get(p["test"], p["test"]) for p in table["pairs"]})
        parts.append(f"<h3>{esc(metric)} ({_direction(table)})</h3>")
        parts.append(f"<p class='muted'>pairwise tests: {esc(', '.join(tests))}; "
                     "Holm-adjusted over the pairs.</p>")
        parts.append(scroll(_ranked_table(table)))
        parts.append(_pairs_table(table))
        parts.append(chart(f"forest plot of {metric}", forest_figure, table, metric))
        if len(table["models"]) > 2:   # two models: one p, already in the pairs table
            parts.append(chart(f"p-value heatmap of {metric}", pvalue_heatmap, table, metric,
                               alpha=alpha))
    for key, block in doc.items():   # a second comparison (the measures over all models)
        if isinstance(block, Mapping) and "ranked" in block and "metrics" in block:
            for metric, table in block["metrics"].items():
                title = f"{key.replace('_', ' ')}: {metric} ({_direction(table)})"
                parts.append(f"<h3>{esc(title)}</h3>")
                parts.append(scroll(_ranked_table(table)))
                parts.append(chart(f"forest plot of {title}", forest_figure, table, metric))
    return "".join(parts)


def _direction(table: Mapping[str, Any]) -> str:
    return direction_text(table)


def _paper_table(doc: Mapping[str, Any]) -> str:
    metrics = doc["metrics"]
    head = "".join(f"<th>{esc(m)} {direction_arrow(t)}</th>"
                   for m, t in metrics.items())
    rows = []
    shown = display_names(doc["models"])
    for name in doc["models"]:
        cells = "".join(f"<td>{fmt(t['models'][name]['value'])} "
                        f"<sup>{esc(t['models'][name]['group'] or '–')}</sup></td>"
                        for t in metrics.values())
        rows.append(f"<tr>{_name_cell(name, shown[name])}{cells}</tr>")
    return scroll(f"<table class='compare'><thead><tr><th>model</th>{head}</tr></thead>"
                  f"<tbody>{''.join(rows)}</tbody></table>")


def _rank(value: Any) -> str:
    """A rank as a whole number ("3", not "3.0"); a fractional one (a document written before
    rank intervals were whole) as it is."""
    if value is None or (isinstance(value, float) and value != value):
        return "–"
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _rank_span(row: Mapping[str, Any]) -> str:
    return f"[{_rank(row.get('rank_low'))}–{_rank(row.get('rank_high'))}]"


def _ranked_table(table: Mapping[str, Any]) -> str:
    rows = []
    shown = display_names(table["models"])
    for name, row in sorted(table["models"].items(), key=lambda kv: kv[1]["rank"]):
        rows.append(f"<tr><td>{row['rank']} "
                    f"<span class='muted nowrap'>{_rank_span(row)}</span></td>"
                    f"{_name_cell(name, shown[name])}"
                    f"<td>{fmt(row['value'])}{interval(row['value'], row['low'], row['high'])}"
                    f"</td><td>{esc(row['group'] or '–')}</td></tr>")
    return ("<table><thead><tr><th>rank [95%]</th><th>model</th><th>value [95%]</th>"
            f"<th>group</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")


def _p(value: Any) -> str:
    """A p-value cell: "–" for none, "< 0.0001" below it, else four significant digits."""
    if not isinstance(value, (int, float)) or value != value:
        return "–"
    return "&lt;&nbsp;0.0001" if value < 1e-4 else f"{value:.4g}"


def _pairs_table(table: Mapping[str, Any]) -> str:
    """Every pair's difference (first minus second, the first ranked above) with its 95%
    interval, p-value, Holm-adjusted p-value and test; a pair without a p-value says why. With
    more than :data:`ALL_PAIRS` pairs, each model against the next ranked."""
    pairs = [p for p in table.get("pairs") or () if "diff" in p]
    if not pairs:
        return ""
    caption = "the pair" if len(pairs) == 1 else f"all {len(pairs)} pairs"
    if len(pairs) > ALL_PAIRS:
        ranked = [n for n, _ in sorted(table["models"].items(), key=lambda kv: kv[1]["rank"])]
        by_pair = {(p["a"], p["b"]): p for p in pairs}
        pairs = [p for a, b in pairwise(ranked)
                 if (p := by_pair.get((a, b)) or by_pair.get((b, a))) is not None]
        caption = (f"each model against the next ranked ({len(pairs)} of "
                   f"{len(table['pairs']):,} pairs; every pair is in metrics.json)")
    shown = display_names([n for p in pairs for n in (p["a"], p["b"])])
    rows = []
    for p in pairs:
        span = "" if p.get("low") is None or p["low"] != p["low"] else \
            f"<div class='ci'>[{fmt(p['low'])}, {fmt(p['high'])}]</div>"
        test = esc(_TESTS.get(p.get("test"), p.get("test") or ""))
        if p.get("untested"):
            test += f"<div class='ci'>no p-value: {esc(p['untested'].replace('_', ' '))}</div>"
        rows.append(f"<tr><th scope='row'>{esc(shown[p['a']])} − {esc(shown[p['b']])}</th>"
                    f"<td>{fmt(p['diff'])}{span}</td><td>{_p(p.get('p'))}</td>"
                    f"<td>{_p(p.get('p_holm'))}</td><td>{test}</td></tr>")
    return scroll(f"<table class='pairs'><caption class='muted'>{esc(caption)}</caption><thead><tr>"
                  "<th>pair</th><th>difference [95%]</th><th>p</th><th>Holm p</th>"
                  f"<th>test</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")
