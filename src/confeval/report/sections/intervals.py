"""The report section of the intervals suite: coverage and width per method, point metrics,
coverage by level, width by group, diagnostics and the ranking-scoring gap."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table

from ..figures import width_by_group_figure
from ..html import _mean_std, _table, chart, esc, fmt, register_section, short_name
from ..terminal import blank, file_table, fit_lead_column, register_table

__all__ = ["render_intervals"]


def merged_rows(rows: list[list[str]]) -> list[list[str]]:
    """Rows whose cells after the first are all equal, as one row led by their first cells
    joined ("naive, cqr, lvd"): nine methods of the same 1.0000 ± 0.0000 are one row, and
    the methods that differ stand out."""
    merged: dict[tuple[str, ...], list[str]] = {}
    for row in rows:
        merged.setdefault(tuple(row[1:]), []).append(row[0])
    return [[", ".join(names), *cells] for cells, names in merged.items()]


def _method_table(head: list[str], rows: list[list[str]], first: str) -> str:
    return _table(head, merged_rows(rows), first)


def _diagnostics_tables(methods: Mapping[str, Any], interval: list[str]) -> str:
    """Informativeness bands and coverage by the judge's error, per interval method."""
    diag = {m: methods[m]["diagnostics"] for m in interval if methods[m].get("diagnostics")}
    if not diag:
        return ""
    bands = ("decisive", "moderate", "uninformative")
    out = ["<h3>Informativeness of the adjusted intervals (share of items)</h3>" + _method_table(
        list(bands), [[esc(m)] + [_mean_std(d["informativeness_adj"][b]["share"])
                                  if d["informativeness_adj"].get(b, {}).get("share")
                                  else "–" for b in bands] for m, d in diag.items()],
        "method")]
    out.append("<h3>Interval midpoint as a point estimate</h3>" + _method_table(
        ["MAE (raw)", "Pearson (raw)", "MAE (adj.)", "Pearson (adj.)"],
        [[esc(m)] + [_mean_std(d["midpoint"][k]) if d["midpoint"].get(k) else "–"
                     for k in ("mae_raw", "pearson_raw", "mae_adj", "pearson_adj")]
         for m, d in diag.items()], "method"))
    with_bins = {m: d["error_bins"] for m, d in diag.items() if d.get("error_bins")}
    if with_bins:
        errors = sorted({e for bins in with_bins.values() for e in bins}, key=int)
        out.append("<h3>Coverage (raw) by the judge's absolute error</h3>" + _method_table(
            [f"|error| = {e}" for e in errors],
            [[esc(m)] + [_mean_std(bins[e]["coverage_raw"]) if e in bins else "–"
                         for e in errors] for m, bins in with_bins.items()], "method"))
    return "".join(out)


@register_section("intervals")
def render_intervals(section: Mapping[str, Any]) -> str:
    """Per file: coverage and width of every interval method (raw and adjusted), rating-set
    coverage and size, the judge's point metrics, coverage by level, width by group (one
    model, and a model per group), diagnostics and the ranking-scoring gap."""
    parts = []
    for name, r in section["results"].items():
        label = esc(short_name(name))
        methods = r["methods"]
        interval = [m for m, v in methods.items() if "width_raw" in v]
        sets = [m for m, v in methods.items() if "set_size" in v]
        parts.append(f"<h3>{label}: {fmt(r.get('n'))} items, alpha {fmt(r.get('alpha'))}, "
                     f"{len(r.get('seeds', []))} seeds"
                     f"{', Mondrian' if r.get('mondrian') else ''}</h3>")
        if interval:
            parts.append("<h4>Interval methods: coverage and width (mean ± std over "
                         "seeds)</h4>" + _method_table(
                             ["coverage (raw)", "width (raw)", "coverage (adj.)",
                              "width (adj.)"],
                             [[esc(m)] + [_mean_std(methods[m][k]) for k in
                                          ("coverage_raw", "width_raw", "coverage_adj",
                                           "width_adj")] for m in interval], "method"))
        if sets:
            parts.append("<h4>Rating-set methods: coverage and size</h4>" + _method_table(
                ["coverage", "mean set size"],
                [[esc(m), _mean_std(methods[m]["coverage"]),
                  _mean_std(methods[m]["set_size"])] for m in sets], "rating-set method"))
        if r.get("point"):
            keys = ["pearson", "spearman", "kendall", "accuracy", "within1", "mae", "bias"]
            parts.append("<h3>Judge point metrics</h3>" + _table(
                keys, [[label] + [fmt(r["point"].get(k)) for k in keys]],
                section.get("name_header", "judge")))
        if interval and methods[interval[0]].get("levels"):
            lv = list(methods[interval[0]]["levels"])
            parts.append("<h3>Coverage (adjusted) by ground-truth level</h3>" + _method_table(
                [f"GT {x}" for x in lv],
                [[esc(m)] + [_mean_std(methods[m]["levels"][x]["coverage_adj"]) for x in lv]
                 for m in interval], "method"))
        if interval and methods[interval[0]].get("groups"):
            shown = interval[:2]
            widths = {m: {g: v["width_raw"]["mean"] for g, v in methods[m]["groups"].items()}
                      for m in shown}
            parts.append("<h3>Width by group</h3>" + chart("interval width by group",
                                                           width_by_group_figure, widths))
        if r.get("separately") and interval:
            shown = [m for m in interval[:2]
                     if all(m in part["methods"] for part in r["separately"].values())]
            widths = {m: {g: part["methods"][m]["width_raw"]["mean"]
                          for g, part in r["separately"].items()} for m in shown}
            if widths:
                parts.append("<h3>Width by group, each group calibrated on its own</h3>"
                             + chart("per-group runs", width_by_group_figure, widths))
        parts.append(_diagnostics_tables(methods, interval))
        if r.get("rsg"):
            method = next(iter(r["rsg"]))
            rows = sorted(r["rsg"][method].items(), key=lambda kv: -kv[1]["rsg"])
            parts.append(f"<h3>Ranking-scoring gap by group ({esc(method)})</h3>"
                         "<p class='muted'>RSG = Pearson − (1 − mean raw width / range): "
                         "positive when the judge ranks better than it scores.</p>" + _table(
                             ["Pearson", "width (raw)", "RSG"],
                             [[esc(g), fmt(v["pearson"], 3), fmt(v["width_raw"], 2),
                               fmt(v["rsg"], 3)] for g, v in rows], "group"))
    return "".join(parts)


@register_table("intervals")
def intervals_table(results: dict) -> Table:
    """One row per (file, method): coverage and width (raw, adjusted) or set size."""
    table, leads = file_table("Conformal intervals for judge scores (mean over seeds)",
                              ("method", "cov raw", "width raw", "cov adj", "width adj / size"),
                              results)

    def v(m: dict, key: str) -> str:
        return f"{m[key]['mean']:.3f}" if key in m else "–"

    for first, res in zip(leads, results.values()):
        for i, (name, m) in enumerate(res["methods"].items()):
            interval = "width_adj" in m  # an interval method, else a rating-set method
            cov = v(m, "coverage_raw" if interval else "coverage")
            table.add_row(*(first if i == 0 else blank(first)), name, cov, v(m, "width_raw"),
                          v(m, "coverage_adj") if interval else cov,
                          v(m, "width_adj" if interval else "set_size"))
    said = _groups_said(results)
    if said:
        table.caption = "\n".join(c for c in (table.caption, said) if c)
    return fit_lead_column(table)


def _groups_said(results: dict) -> str | None:
    """Where the per-group numbers are (--group-col, --separately): the table is the whole
    data's, and a reader who asked for groups must not take it for the answer."""
    groups = max((len(m.get("groups") or {}) for res in results.values()
                  for m in res["methods"].values()), default=0)
    separately = any(res.get("separately") for res in results.values())
    if not groups and not separately:
        return None
    parts = []
    if groups:
        parts.append(f"by group ({groups} groups): --json methods.NAME.groups")
    if separately:
        parts.append("each group on its own (--separately): --json separately and "
                     "separately_pooled")
    return "all items above; " + "; ".join(parts) + "; both in the report"
