"""The report section of the measures suite: measures x metrics with question-bootstrap
intervals, in ranking order, with the paired p-value against the next measure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..html import _table, esc, fmt, register_section, short_name, value_with_ci

__all__ = ["render_measures"]


@register_section("measures")
def render_measures(section: Mapping[str, Any]) -> str:
    """Per file: rank, AUROC and AUARC with 95% intervals over questions, RCE, ECE after
    histogram binning, and the paired bootstrap p-value against the next-ranked measure."""
    parts = ["<p class='muted'>Rows are (question, option) pairs; the gold option is the "
             "correct one. ECE is measured after histogram binning fitted on other "
             "questions (in-sample binning would make it 0 by construction). Intervals "
             "resample questions.</p>"]
    for name, r in section["results"].items():
        parts.append(f"<h3>{esc(short_name(name))}: {fmt(r.get('n_rows'))} rows, "
                     f"{fmt(r.get('n_questions'))} questions, gold share "
                     f"{fmt(r.get('base_rate'))}</h3>")
        rows = []
        for row in r.get("ranking", []):
            m = r["measures"][row["measure"]]
            ci = m.get("ci", {})
            rows.append([esc(row["rank"]), esc(row["measure"]),
                         value_with_ci(m.get("auroc"), ci.get("auroc")),
                         value_with_ci(m.get("auarc"), ci.get("auarc")), fmt(m.get("rce")),
                         fmt(m.get("ece")), fmt((row.get("vs_next") or {}).get("p_value"))])
        parts.append(_table(["measure", "AUROC", "AUARC", "RCE", "ECE (binned)", "p vs next"],
                            rows, "rank"))
    return "".join(parts)
