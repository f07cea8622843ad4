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
from collections.abc import Callable, Mapping
from typing import Any

from ..metrics.compare import direction_arrow

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


def _cell(field: str, value: Any) -> Any:
    """A CSV cell: ranks and rank-interval ends as whole numbers ("2", also from a document
    that wrote them as 2.0), everything else as it is."""
    if field.startswith("rank") and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def to_csv(doc: Mapping[str, Any]) -> str:
    """One row per model: for every metric its value, interval, rank, rank interval (whole
    ranks) and group (columns ``<metric>_<field>``)."""
    metrics = _metrics(doc)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["model"] + [f"{m}_{f}" for m in metrics for f in _CSV_FIELDS])
    for name in _models(doc):
        row = [name]
        for table in metrics.values():
            entry = table["models"].get(name)   # --suite auto: a model some suite lacks
            row += ["" if entry is None or entry[f] is None else _cell(f, entry[f])
                    for f in _CSV_FIELDS]
        writer.writerow(row)
    return buffer.getvalue()


def _best(table: Mapping) -> set[str]:
    values = {n: r["value"] for n, r in table["models"].items()
              if r["value"] is not None and math.isfinite(r["value"])}
    if not values:
        return set()
    target = table.get("target")
    if target is not None:   # a coverage: the value closest to its promised level
        top = min(abs(v - target) for v in values.values())
        return {n for n, v in values.items() if abs(v - target) == top}
    top = (max if table["higher_is_better"] else min)(values.values())
    return {n for n, v in values.items() if v == top}


def _rows(doc: Mapping[str, Any], digits: int, *, name: Callable[[str], str], missing: str,
          bold: Callable[[str], str], letters: Callable[[str, str], str]) -> list[list[str]]:
    """Each model's cells, models in rank order: its name, then per metric the value (in
    ``bold`` where it is the best) with its group ``letters``, ``missing`` where a model was
    not compared on it."""
    metrics = _metrics(doc)
    best = {m: _best(t) for m, t in metrics.items()}
    rows = []
    for model in _models(doc):
        cells = [name(model)]
        for metric, table in metrics.items():
            entry = table["models"].get(model)   # --suite auto: a model some suite lacks
            if entry is None:
                cells.append(missing)
                continue
            value = _number(entry["value"], digits)
            value = bold(value) if model in best[metric] else value
            cells.append(letters(value, entry["group"]) if entry["group"] else value)
        rows.append(cells)
    return rows


def to_markdown(doc: Mapping[str, Any], digits: int = 3) -> str:
    """A Markdown table: value and group letters per metric, the best value in bold."""
    head = ["model"] + [f"{m} {direction_arrow(t)}"
                        for m, t in _metrics(doc).items()]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cells) + " |" for cells in _rows(
        doc, digits, name=lambda n: n.replace("|", "\\|"), missing="–",
        bold=lambda v: f"**{v}**", letters=lambda v, g: f"{v} ({g})")]
    return "\n".join(lines) + "\n"


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}", "|": r"\textbar{}", "<": r"\textless{}",
                  ">": r"\textgreater{}"}


def _latex(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def to_latex(doc: Mapping[str, Any], digits: int = 3) -> str:
    """A booktabs ``tabular``: value with its group letters as a superscript per metric, the
    best value in bold; models that share a letter are not separated by any Holm-adjusted
    test."""
    metrics = _metrics(doc)
    up, down, to = r"$\uparrow$", r"$\downarrow$", r"$\to$"
    head = ["Model"] + [f"{_latex(m)} {direction_arrow(t, up, down, to)}"
                        for m, t in metrics.items()]
    lines = [r"\begin{tabular}{l" + "r" * len(metrics) + "}", r"\toprule",
             " & ".join(head) + r" \\", r"\midrule"]
    lines += [" & ".join(cells) + r" \\" for cells in _rows(
        doc, digits, name=_latex, missing="--", bold=lambda v: rf"\textbf{{{v}}}",
        letters=lambda v, g: rf"{v}$^{{\mathrm{{{g}}}}}$")]
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"
