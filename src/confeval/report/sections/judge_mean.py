"""The report section of ``confeval judge mean``: per input the three estimates of the mean
human score (classical, PPI, PPI++) with their intervals, drawn one above the other; the
judge's own mean beside them; each group's estimates; the labels a target width needs; and,
where human scores were hidden (``--keep-labels``), whether each interval covers the mean of
them all. Its terminal tables are here too."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rich.table import Table

from ..figures import _intervals, _plain_text, plt, png_data_uri
from ..html import _table, chart, esc, fmt, register_section
from ..terminal import file_names, register_table, simple_table

__all__ = ["groups_table", "judge_mean_table", "render_judge_mean"]

_LABELS = {"classical": "classical (humans only)", "ppi": "PPI (λ = 1)",
           "ppi++": "PPI++ (tuned λ)"}


@register_section("judge_mean")
def render_judge_mean(section: Mapping[str, Any]) -> str:
    return "".join(_one(name, res) for name, res in section["results"].items())


def _level(res: Mapping[str, Any]) -> str:
    return f"{100 * (1 - res['alpha']):g}%"


def _one(name: str, res: Mapping[str, Any]) -> str:
    methods = res["methods"]
    parts = [f"<h3>{esc(name)}</h3>",
             f"<p>{fmt(res['n_labelled'])} items with a human score, "
             f"{fmt(res['n_unlabelled'])} with the judge's only; scale "
             f"{fmt(res['scale'][0], 2)}–{fmt(res['scale'][1], 2)}. Two-sided {_level(res)} "
             "normal-approximation intervals (prediction-powered inference's, as ppi_py "
             "computes them; not bootstrap intervals). The judge's own mean over all items: "
             f"{fmt(res['judge_mean'])}.</p>",
             _table(["estimate", "low", "high", "width", "se", "λ"],
                    [[esc(_LABELS.get(m, m)), fmt(v["estimate"]), fmt(v["low"]),
                      fmt(v["high"]), fmt(v["width"]), fmt(v["se"]), fmt(v["lambda"], 3)]
                     for m, v in methods.items()], "method")]
    notes = [f"{esc(_LABELS.get(m, m))}: {esc(v['note'])}" for m, v in methods.items()
             if v.get("note")]
    if notes:
        parts.append("<p class='muted'>" + "<br>".join(notes) + "</p>")
    kept = res.get("kept_labels")
    reference = kept["human_mean_all_labelled"] if kept else None
    parts.append(chart(f"estimates of the mean of {name}", _estimates_figure, methods,
                       judge=res["judge_mean"], reference=reference))
    if kept:
        covered = ", ".join(f"{_LABELS.get(m, m)}: {'yes' if c else 'no' if c is False else '–'}"
                            for m, c in kept["covered"].items())
        parts.append(f"<p>{fmt(kept['kept'])} human scores kept (seed {kept['seed']}), "
                     f"{fmt(kept['hidden'])} hidden; the mean of all of them is "
                     f"{fmt(reference)}. Covered by the interval — {esc(covered)}.</p>")
    plan = res.get("labels_needed")
    if plan:
        parts.append("<h4>Labels needed</h4>" + _table(["labelled items"], [
            ["classical", fmt(plan["classical"]) + ("" if plan["classical_reachable"]
                                                    else " (more than the items)")],
            ["PPI++", fmt(plan["ppi++"]) if plan["ppi++"] is not None
             else "not reachable with these items"]],
            f"for a width of {fmt(plan['target_width'], 3)}"))
        parts.append(f"<p class='muted'>From the labelled items' variances: human sd "
                     f"{fmt(plan['sd_human'], 3)}, judge sd {fmt(plan['sd_judge'], 3)}, "
                     f"correlation {fmt(plan['correlation'], 3)}; {fmt(plan['n_items'])} "
                     "judged items, those not labelled being the unlabelled ones.</p>")
    groups = res.get("groups")
    if groups:
        rows = []
        for g, r in groups.items():
            if r.get("skipped"):
                rows.append([esc(g), fmt(r["n_labelled"]), fmt(r["n_unlabelled"]),
                             f"<span class='muted'>{esc(r['skipped'])}</span>", "", ""])
                continue
            rows.append([esc(g), fmt(r["n_labelled"]), fmt(r["n_unlabelled"])]
                        + [_cell(r["methods"][m]) for m in ("classical", "ppi", "ppi++")])
        parts.append("<h4>By group</h4>" + _table(
            ["labelled", "unlabelled", "classical", "PPI", "PPI++"], rows, "group"))
    return "".join(parts)


def _cell(m: Mapping[str, Any]) -> str:
    if m["low"] is None:
        return fmt(m["estimate"]) + "<div class='ci'>no interval</div>"
    return f"{fmt(m['estimate'])}<div class='ci'>[{fmt(m['low'])}, {fmt(m['high'])}]</div>"


@_plain_text
def _estimates_figure(methods: Mapping[str, Mapping], *, judge: float,
                      reference: float | None) -> str:
    """The three intervals one above the other, the judge's own mean (dashed) and, with
    hidden labels, the mean of every human score (dotted)."""
    names = list(methods)[::-1]
    fig, ax = plt.subplots(figsize=(5.6, 0.35 * len(names) + 1.2))
    y = list(range(len(names)))
    low = [math.nan if methods[m]["low"] is None else methods[m]["low"] for m in names]
    high = [math.nan if methods[m]["high"] is None else methods[m]["high"] for m in names]
    _intervals(ax, y, low, high, color="#4C78A8")
    ax.plot([methods[m]["estimate"] for m in names], y, "o", color="#4C78A8", ms=4)
    ax.axvline(judge, color="#b3261e", ls="--", lw=1, label="judge's own mean")
    if reference is not None:
        ax.axvline(reference, color="#1d2330", ls=":", lw=1, label="mean of all human scores")
    ax.set_yticks(y, [_LABELS.get(m, m) for m in names], fontsize=8)
    ax.set(xlabel="mean human score")
    ax.legend(fontsize=7, loc="best")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return png_data_uri(fig)


def _number(value: Any, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


@register_table("judge_mean")
def judge_mean_table(results: dict) -> Table:
    """One row per (file, method): the estimate, its interval, the width and the weight."""
    names = file_names(results)
    first = next(iter(results.values()))
    table = simple_table(f"Mean human score, {_level(first)} intervals: "
                         + ", ".join(names))
    if len(results) > 1:
        table.add_column("file", overflow="fold")
    for header in ("method", "estimate", "low", "high", "width", "lambda"):
        table.add_column(header, justify="left" if header == "method" else "right",
                         no_wrap=True)
    for name, res in zip(names, results.values()):
        for k, (method, m) in enumerate(res["methods"].items()):
            lead = [name if k == 0 else ""] if len(results) > 1 else []
            table.add_row(*lead, method, _number(m["estimate"]), _number(m["low"]),
                          _number(m["high"]), _number(m["width"]), _number(m["lambda"], 2))
    return table


def groups_table(result: Mapping[str, Any]) -> Table:
    """One row per group: its counts and the PPI++ and classical estimates with intervals."""
    table = simple_table(f"By group, {_level(result)} intervals")
    for header in ("group", "n lab", "n unlab", "classical", "PPI++"):
        table.add_column(header, justify="left" if header == "group" else "right",
                         overflow="fold")
    for g, r in result["groups"].items():
        if r.get("skipped"):
            table.add_row(g, f"{r['n_labelled']:,}", f"{r['n_unlabelled']:,}", "–", "–")
            continue
        table.add_row(g, f"{r['n_labelled']:,}", f"{r['n_unlabelled']:,}",
                      *(_interval(r["methods"][m]) for m in ("classical", "ppi++")))
    return table


def _interval(m: Mapping[str, Any]) -> str:
    if m["low"] is None:
        return f"{m['estimate']:.2f} (no interval)"
    return f"{m['estimate']:.2f} [{m['low']:.2f}, {m['high']:.2f}]"
