"""The report section of ``confeval compare``: the paper table (models by metrics, group
letters), then per metric the ranked table with intervals and rank intervals, a forest plot and
a heatmap of the Holm-adjusted pairwise p-values, and the comparison's warnings. Model names
longer than :data:`~confeval._text.NAME_WIDTH` are shortened, whole in each row's tooltip
(``title``), so a page grows with a name's length only by those tooltips."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._text import display_name, display_names
from ..figures import forest_figure, pvalue_heatmap
from ..html import chart, esc, fmt, register_section, scroll

__all__ = ["render_compare"]

_TESTS = {"mcnemar_exact": "exact McNemar", "delong": "DeLong",
          "paired_bootstrap": "paired bootstrap"}


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
            f"<td>#{e['rank']} of {e['of']} <span class='muted'>[{fmt(e['rank_low'], 1)}–"
            f"{fmt(e['rank_high'], 1)}]</span></td><td>{esc(e['group'] or '–')}</td>"
            f"<td class='muted'>{esc(e['suite'])}: {esc(e['metric'])} "
            f"({'↑' if e['higher_is_better'] else '↓'})</td></tr>"
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
    for metric, table in metrics.items():
        tests = sorted({_TESTS.get(p["test"], p["test"]) for p in table["pairs"]})
        parts.append(f"<h3>{esc(metric)} ({_direction(table)})</h3>")
        parts.append(f"<p class='muted'>pairwise tests: {esc(', '.join(tests))}; "
                     "Holm-adjusted over the pairs.</p>")
        parts.append(scroll(_ranked_table(table)))
        parts.append(chart(f"forest plot of {metric}", forest_figure, table, metric))
        parts.append(chart(f"p-value heatmap of {metric}", pvalue_heatmap, table, metric))
    for key, block in doc.items():   # a second comparison (the measures over all models)
        if isinstance(block, Mapping) and "ranked" in block and "metrics" in block:
            for metric, table in block["metrics"].items():
                title = f"{key.replace('_', ' ')}: {metric} ({_direction(table)})"
                parts.append(f"<h3>{esc(title)}</h3>")
                parts.append(scroll(_ranked_table(table)))
                parts.append(chart(f"forest plot of {title}", forest_figure, table, metric))
    return "".join(parts)


def _direction(table: Mapping[str, Any]) -> str:
    return "higher is better" if table["higher_is_better"] else "lower is better"


def _paper_table(doc: Mapping[str, Any]) -> str:
    metrics = doc["metrics"]
    head = "".join(f"<th>{esc(m)} {'↑' if t['higher_is_better'] else '↓'}</th>"
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


def _ranked_table(table: Mapping[str, Any]) -> str:
    rows = []
    shown = display_names(table["models"])
    for name, row in sorted(table["models"].items(), key=lambda kv: kv[1]["rank"]):
        rows.append(f"<tr><td>{row['rank']} <span class='muted'>[{fmt(row['rank_low'], 1)}–"
                    f"{fmt(row['rank_high'], 1)}]</span></td>{_name_cell(name, shown[name])}"
                    f"<td>{fmt(row['value'])}<div class='ci'>[{fmt(row['low'])}, "
                    f"{fmt(row['high'])}]</div></td><td>{esc(row['group'] or '–')}</td></tr>")
    return ("<table><thead><tr><th>rank [95%]</th><th>model</th><th>value [95%]</th>"
            f"<th>group</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")
