"""The report section of the measures suite: measures x metrics with question-bootstrap
intervals, in ranking order, with the paired p-value against the next measure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table

from ..figures import (
    line_figure,
    rank_calibration_figure,
    ranking_figure,
    risk_coverage_figure,
    roc_figure,
)
from ..html import _table, chart, esc, fmt, register_section, short_name, value_with_ci
from ..terminal import (
    blank,
    file_labels,
    file_table,
    fit_lead_column,
    number,
    register_table,
    simple_table,
)

__all__ = ["render_measures", "render_measures_study"]


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
                         _ece_cell(m), fmt((row.get("vs_next") or {}).get("p_value"))])
        parts.append(_table(["measure", "AUROC", "AUARC", "RCE", "ECE (binned)", "p vs next"],
                            rows, "rank"))
        parts.append(_notes(r))
        parts.append(_figures(r, short_name(name)))
    return "".join(parts)


def _ece_cell(m: Mapping[str, Any]) -> str:
    """ECE, marked when the calibrated measure took one value: near 0 because constant."""
    if m.get("ece_levels") == 1:
        return f"{fmt(m.get('ece'))}<div class='ci'>one value: the measure barely varies</div>"
    return fmt(m.get("ece"))


def _notes(r: Mapping[str, Any]) -> str:
    """Measures the run could not give, and the heads chosen for CSL@k."""
    out = []
    for measure, why in (r.get("unavailable") or {}).items():
        out.append(f"<li>{esc(measure)}: not computed ({esc(why)})</li>")
    heads = r.get("head_selection")
    if heads:
        out.append(f"<li>CSL@{esc(heads['k'])}: heads {esc(heads['heads'])} chosen by AUROC on "
                   f"{esc(heads['n_questions_used'])} questions, which are left out of every "
                   "metric above</li>")
    return f"<ul class='muted'>{''.join(out)}</ul>" if out else ""


def _figures(r: Mapping[str, Any], name: str) -> str:
    curves = r.get("curves") or {}
    if not curves:
        return ""
    order = [row["measure"] for row in r.get("ranking", [])]
    aurocs = {m: r["measures"][m]["auroc"] for m in order}
    intervals = {m: (r["measures"][m].get("ci") or {}).get("auroc") for m in order}
    top = order[:6]  # curves of every measure on one axis would be unreadable
    left = (f"<p class='muted'>Curves of the {len(top)} measures ranked first by AUROC; "
            f"the other {len(order) - len(top)} are in the table and the ranking.</p>"
            if len(order) > len(top) else "")
    label = esc(name)
    return "".join([
        f"<h3>{label}: ranking of the measures (AUROC, 95% intervals)</h3>", left,
        chart(f"ranking of the measures ({name})", ranking_figure, aurocs, intervals),
        f"<h3>{label}: ROC curves</h3>",
        chart(f"ROC curves ({name})",
              lambda: roc_figure({m: curves[m]["roc"] for m in top})),
        f"<h3>{label}: risk–coverage curves</h3>",
        chart(f"risk-coverage curves ({name})",
              lambda: risk_coverage_figure({m: curves[m]["risk_coverage"] for m in top})),
        f"<h3>{label}: rank-calibration diagrams (one panel per measure)</h3>",
        chart(f"rank-calibration diagrams ({name})",
              lambda: rank_calibration_figure({m: curves[m]["rank_calibration"]
                                               for m in order}))])


@register_section("measures_study")
def render_measures_study(section: Mapping[str, Any]) -> str:
    """Threshold sensitivity (each measure's AUROC across thresholds, the rankings, Kendall's
    tau between thresholds) or label noise (Kendall's tau with the clean ranking against
    sigma, mean and std over seeds)."""
    parts = []
    for name, r in section["results"].items():
        label = esc(short_name(name))
        if "by_threshold" in r:
            by = r["by_threshold"]
            taus = list(by)
            measures = list(dict.fromkeys(m for t in taus for m in by[t]["auroc"]))
            series = {m: ([float(t) for t in taus], [by[t]["auroc"].get(m) for t in taus])
                      for m in measures}
            parts.append(f"<h3>{label}: rankings by threshold</h3>" + _table(
                ["base rate", "ranking (by AUROC)"],
                [[esc(t), fmt(by[t]["base_rate"]), esc(" > ".join(by[t]["order"]) or "–")]
                 for t in taus], "threshold"))
            parts.append(_table(["Kendall tau"], [[esc(k), fmt(v)]
                                                  for k, v in r["kendall"].items()], "pair"))
            parts.append(chart(f"threshold sensitivity ({label})", line_figure, series,
                               xlabel="threshold tau", ylabel="AUROC",
                               title="AUROC of each measure across thresholds"))
        elif "by_sigma" in r:
            by = r["by_sigma"]
            sigmas = list(by)
            parts.append(f"<h3>{label}: label noise (threshold {fmt(r['threshold'])})</h3>"
                         + _table(["Kendall tau (mean)", "std", "labels flipped"],
                                  [[esc(s), fmt(by[s]["kendall_mean"]),
                                    fmt(by[s]["kendall_std"]), fmt(by[s]["labels_flipped"])]
                                   for s in sigmas], "sigma"))
            parts.append(chart(
                f"label noise ({label})", line_figure,
                {"Kendall tau with the clean ranking": ([float(s) for s in sigmas],
                                                        [by[s]["kendall_mean"]
                                                         for s in sigmas])},
                xlabel="noise sigma", ylabel="Kendall tau", title="Ranking under label noise"))
    return "".join(parts)


@register_table("measures")
def measures_table(results: dict) -> Table:
    """One row per (file, measure), in ranking order."""
    table, leads = file_table("Confidence measures on multiple-choice options (ranked by "
                              "AUROC; ECE after histogram binning)",
                              ("rank", "measure", "AUROC", "AUARC", "RCE", "ECE", "p next"),
                              results)
    for first, res in zip(leads, results.values()):
        for i, row in enumerate(res["ranking"]):
            m = res["measures"][row["measure"]]
            table.add_row(*(first if i == 0 else blank(first)), str(row["rank"]),
                          row["measure"], number(m["auroc"]), number(m["auarc"]),
                          number(m["rce"]), number(m["ece"]),
                          number((row.get("vs_next") or {}).get("p_value")))
    return fit_lead_column(table)


@register_table("measures_study")
def study_table(results: dict) -> Table:
    labels = file_labels(results)
    table = simple_table("Rankings of the measures (by AUROC)", labels.key())
    table.add_column("file", no_wrap=True)
    for header in ("setting", "ranking", "base rate / mean Kendall tau"):
        table.add_column(header, overflow="fold")
    for name, r in zip(labels.labels, results.values()):
        parts = r.get("by_threshold") or r.get("by_sigma") or {
            k: r[k] for k in ("mcqa_eval", "threshold_based") if k in r}
        for key, part in parts.items():
            order = " > ".join(part.get("order") or r.get("clean", {}).get("order") or [])
            summary = part.get("kendall_mean", part.get("base_rate"))
            table.add_row(name, key, order or "-", "-" if summary is None else f"{summary:.3f}")
        if isinstance(r.get("kendall"), (float, type(None))) and "kendall" in r:
            table.add_row(name, "Kendall tau between them", "-", f"{r['kendall']}")
    return fit_lead_column(table)
