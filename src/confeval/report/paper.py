"""``confeval compare``'s table as papers print it: models in rows (in the rank order of the
first metric), one column per metric with its value, its significance-group letters and the
direction in the header; as CSV (every number, for further work), Markdown or LaTeX (booktabs;
the best value of each metric in bold, letters as superscripts).

Written by hand rather than with pandas' ``to_latex`` (which needs jinja2, and escapes
neither model names with underscores nor percent signs in our layout) — a few lines."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["FORMATS", "to_csv", "to_latex", "to_markdown"]

FORMATS = ("table", "markdown", "latex", "csv")
"""The ``--format`` choices of ``confeval compare`` (``table``: the terminal tables)."""

_CSV_FIELDS = ("value", "low", "high", "rank", "rank_low", "rank_high", "group")


def _metrics(doc: Mapping[str, Any]) -> Mapping[str, Mapping]:
    return doc["compare"]["metrics"] if "compare" in doc else doc["metrics"]


def _models(doc: Mapping[str, Any]) -> list[str]:
    return list((doc["compare"] if "compare" in doc else doc)["models"])


def _number(value: Any, digits: int) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    return f"{value:.{digits}f}"


def to_csv(doc: Mapping[str, Any]) -> str:
    """One row per model: for every metric its value, interval, rank, rank interval and group
    (columns ``<metric>_<field>``)."""
    metrics = _metrics(doc)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["model"] + [f"{m}_{f}" for m in metrics for f in _CSV_FIELDS])
    for name in _models(doc):
        row = [name]
        for table in metrics.values():
            entry = table["models"].get(name)   # --suite auto: a model some suite lacks
            row += ["" if entry is None or entry[f] is None else entry[f] for f in _CSV_FIELDS]
        writer.writerow(row)
    return buffer.getvalue()


def _best(table: Mapping) -> set[str]:
    values = {n: r["value"] for n, r in table["models"].items()
              if r["value"] is not None and math.isfinite(r["value"])}
    if not values:
        return set()
    top = (max if table["higher_is_better"] else min)(values.values())
    return {n for n, v in values.items() if v == top}


def to_markdown(doc: Mapping[str, Any], digits: int = 3) -> str:
    """A Markdown table: value and group letters per metric, the best value in bold."""
    metrics = _metrics(doc)
    head = ["model"] + [f"{m} {'↑' if t['higher_is_better'] else '↓'}"
                        for m, t in metrics.items()]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    best = {m: _best(t) for m, t in metrics.items()}
    for name in _models(doc):
        cells = [name.replace("|", "\\|")]
        for metric, table in metrics.items():
            entry = table["models"].get(name)
            if entry is None:
                cells.append("–")
                continue
            value = _number(entry["value"], digits)
            if name in best[metric]:
                value = f"**{value}**"
            cells.append(f"{value} ({entry['group']})" if entry["group"] else value)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}"}


def _latex(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def to_latex(doc: Mapping[str, Any], digits: int = 3) -> str:
    """A booktabs ``tabular``: value with its group letters as a superscript per metric, the
    best value in bold; models that share a letter are not separated by any Holm-adjusted
    test."""
    metrics = _metrics(doc)
    up, down = r"$\uparrow$", r"$\downarrow$"
    head = ["Model"] + [f"{_latex(m)} {up if t['higher_is_better'] else down}"
                        for m, t in metrics.items()]
    lines = [r"\begin{tabular}{l" + "r" * len(metrics) + "}", r"\toprule",
             " & ".join(head) + r" \\", r"\midrule"]
    best = {m: _best(t) for m, t in metrics.items()}
    for name in _models(doc):
        cells = [_latex(name)]
        for metric, table in metrics.items():
            entry = table["models"].get(name)
            if entry is None:
                cells.append("--")
                continue
            value = _number(entry["value"], digits)
            if name in best[metric]:
                value = rf"\textbf{{{value}}}"
            if entry["group"]:
                value += rf"$^{{\mathrm{{{entry['group']}}}}}$"
            cells.append(value)
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"
