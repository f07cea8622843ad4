"""The report sections of the steps suite: ConfProBench metrics with item-bootstrap intervals,
robustness by perturbation, Δp by error type, breakdowns by metadata, generator consistency."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table

from ..figures import grouped_bars_figure
from ..html import _table, chart, esc, fmt, register_section, short_name, value_with_ci
from ..labels import wrap_label
from ..terminal import file_labels, fits, number, register_table, simple_table

__all__ = ["render_steps", "render_steps_consistency"]


@register_section("steps")
def render_steps(section: Mapping[str, Any]) -> str:
    """ConfProBench metrics per file: headline with item-bootstrap intervals, CRS per
    perturbation, Δp per error type and breakdowns by metadata columns."""
    parts = []
    keys = ["crs", "ccr", "accm", "sccr", "css", "ccs", "ece", "ece_correct", "ece_incorrect",
            "delta_ece", "avg", "macro_f1"]
    results = section["results"]
    parts.append("<p class='muted'>Fractions, not percent. CRS compares each step's confidence "
                 "before and after a meaning-preserving perturbation; CSS is the mean drop of "
                 "P(correct) from correct steps to steps of each error type; CCS combines ECE "
                 "and the gap between the ECEs of correct and incorrect steps. Intervals: 95% "
                 "percentile bootstrap over items.</p>")
    parts.append("<h3>ConfProBench metrics (95% intervals beneath the values)</h3>")
    parts.append(_table(keys, [[esc(short_name(name))] + [
        value_with_ci(r.get(k), r.get("ci", {}).get(k)) for k in keys]
        for name, r in results.items()], section.get("name_header", "file")))
    for name, r in results.items():
        label = esc(short_name(name))
        if r.get("by_perturbation"):
            bars = {k.upper(): {v: m[k] for v, m in r["by_perturbation"].items()}
                    for k in ("crs", "ccr", "sccr")}
            parts.append(f"<h3>{label}: robustness by perturbation</h3>" + chart(
                "robustness by perturbation", grouped_bars_figure, bars,
                xlabel="score (fraction)", sort=False,
                title="CRS and its parts by perturbation type") + _table(
                ["CRS", "CCR", "ACCM", "SCCR", "pairs"],
                [[esc(v)] + [fmt(m[k]) for k in ("crs", "ccr", "accm", "sccr")]
                 + [fmt(m["pairs"])] for v, m in r["by_perturbation"].items()],
                "perturbation"))
        if r.get("delta_p"):
            parts.append(f"<h3>{label}: Δp by error type</h3>" + _table(
                ["Δp"], [[esc(t), fmt(v)] for t, v in sorted(r["delta_p"].items(),
                                                            key=lambda kv: -kv[1])],
                "error type"))
        for col, groups in r.get("by_group", {}).items():
            bars = {k.upper(): {g: m[k] for g, m in groups.items() if m.get(k) is not None}
                    for k in ("crs", "css", "ccs")}
            parts.append(f"<h3>{label}: by {esc(col)}</h3>" + chart(
                f"by {col}", grouped_bars_figure, bars, xlabel="score (fraction)", sort=False,
                title=f"CRS, CSS and CCS by {col}") + _table(
                ["CRS", "CSS", "CCS", "avg", "steps"],
                [[esc(g)] + [fmt(m.get(k)) for k in ("crs", "css", "ccs", "avg")]
                 + [fmt(m.get("n_original_rows"))] for g, m in groups.items()], esc(col)))
    return "".join(parts)


@register_section("steps_consistency")
def render_steps_consistency(section: Mapping[str, Any]) -> str:
    """Correlation across judges of CRS/CSS/CCS between two perturbation generators, with
    every judge's pair of values (ConfProBench Appendix H)."""
    parts = []
    for r in section["results"].values():
        metrics = [m for m in ("crs", "css", "ccs") if m in r]
        parts.append("<p class='muted'>Each judge is scored on the same problems perturbed by "
                     "generator A and by generator B; high correlations mean the choice of "
                     "generator does not change the conclusions.</p>")
        parts.append(_table(["Pearson", "Spearman", "judges"], [
            [m.upper(), fmt(r[m]["pearson"], 3), fmt(r[m]["spearman"], 3),
             fmt(r[m]["n_judges"])] for m in metrics], "metric"))
        parts.append(_table([f"{m.upper()} ({g})" for m in metrics for g in ("A", "B")], [
            [esc(j)] + [fmt(v, 4) for m in metrics for v in r[m]["values"][j]]
            for j in r["judges"]], "judge"))
    return "".join(parts)


STEP_KEYS = ("crs", "ccr", "accm", "sccr", "css", "ccs", "ece", "delta_ece", "avg", "macro_f1")


@register_table("steps")
def steps_table(results: dict) -> Table:
    """Metrics as rows, inputs as columns (value and 95% item-bootstrap interval); where that
    is wider than the terminal, each interval under its value and the inputs' labels wrapped
    at their separators."""
    table = _steps_table(results, stacked=False)
    return table if fits(table) else _steps_table(results, stacked=True)


def _steps_table(results: dict, *, stacked: bool) -> Table:
    labels = file_labels(results)
    table = simple_table("Process-judge confidence (fractions)", labels.key())
    table.add_column("metric", no_wrap=True)
    between = "\n" if stacked else " "
    for shown in labels.labels:
        header = wrap_label(shown, 16) if stacked else shown
        table.add_column(header, justify="right", no_wrap=True)
    for key in STEP_KEYS:
        row = []
        for res in results.values():
            value, ci = res.get(key), res.get("ci", {}).get(key)
            text = "–" if value is None else f"{value:.4f}"
            if value is not None and ci:
                text += f"{between}[{ci['low']:.3f}, {ci['high']:.3f}]"
            row.append(text)
        table.add_row(key, *row)
    variants = sorted({v for res in results.values() for v in res.get("by_perturbation", {})})
    for v in variants:
        table.add_row(f"crs: {v}", *[
            f"{res['by_perturbation'][v]['crs']:.4f}{between}"
            f"({res['by_perturbation'][v]['pairs']} pairs)"
            if v in res.get("by_perturbation", {}) else "–" for res in results.values()])
    table.add_row("steps / pairs / unpaired", *[
        f"{res['n_original_rows']} / {res['pairs']} / {res['unpaired_rows']}"
        for res in results.values()])
    return table


@register_table("steps_consistency")
def consistency_table(result: dict) -> Table:
    """CRS, CSS and CCS: the correlation across judges between two generators."""
    table = simple_table("Agreement of two perturbation generators across judges")
    for col in ("metric", "Pearson", "Spearman", "judges"):
        table.add_column(col, justify="right" if col != "metric" else "left")
    for m in ("crs", "css", "ccs"):
        r = result[m]
        table.add_row(m, *(number(r[k]) for k in ("pearson", "spearman")),
                      str(r["n_judges"]))
    return table
