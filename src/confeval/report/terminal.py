"""Terminal tables of results: one per section kind, beside its HTML renderer (a suite's in
``report/sections/<suite>.py``), looked up in :data:`TERMINAL_TABLES` by the command line and
by ``confeval run``/``demo`` for every section they print."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from .._text import display_name, display_names
from .labels import Labels, longest_part, short_labels, wrap_label
from .registries import TERMINAL_TABLES
from .verdicts import OUTSIDE, OUTSIDE_NOTE

__all__ = ["TERMINAL_TABLES", "blank", "cell", "compare_notes", "compare_tables", "file_labels",
           "file_names", "file_table", "fit_lead_column", "fits", "marks_outside", "number",
           "register_table", "results_table", "simple_table", "with_interval"]

register_table = TERMINAL_TABLES.register

WIDE_ENOUGH_FOR_INTERVALS = 200
"""Terminal columns from which metric tables show 95% intervals beside values (--json and the
report always have them)."""

NARROWEST_LABEL = 8
"""A label column is never wrapped narrower than this: below it, the other layout reads
better than names on many lines."""


def terminal_width() -> int:
    """The width rich uses: the terminal's, else $COLUMNS, else 80."""
    return Console().width


def natural_width(table: Table) -> int:
    """The columns a table takes when nothing in it wraps."""
    console = Console(width=100_000)
    return Measurement.get(console, console.options, table).maximum


def fits(table: Table, width: int | None = None) -> bool:
    """Whether ``table`` fits ``width`` columns (default the terminal's) with nothing
    wrapped."""
    return natural_width(table) <= (width or terminal_width())


def cell(res: dict, key: str, with_ci: bool) -> str:
    """A table cell: the value, with its 95% interval when ``with_ci``."""
    value = res.get(key)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, int):
        return f"{value:,}"
    ci = (res.get("ci") or {}).get(key)
    if with_ci and ci and isinstance(ci.get("low"), float) and not math.isnan(ci["low"]):
        return with_interval(value, ci["low"], ci["high"])
    return f"{value:.3f}"


def with_interval(value: float, low: float, high: float) -> str:
    """"0.052 [0.053, 0.117]†": a value and its 95% interval at three decimals, marked
    :data:`~confeval.report.verdicts.OUTSIDE` when the value lies outside the interval as
    printed (the verdicts' rule; :func:`marks_outside` finds the mark for the footnote)."""
    shown = [f"{x:.3f}" for x in (value, low, high)]
    outside = not float(shown[1]) <= float(shown[0]) <= float(shown[2])
    return f"{shown[0]} [{shown[1]}, {shown[2]}]{OUTSIDE if outside else ''}"


def marks_outside(table: Table) -> bool:
    """Whether a cell of ``table`` holds an interval marked by :func:`with_interval` (a
    name holding the character is no mark): then :data:`OUTSIDE_NOTE` goes under it."""
    return any(isinstance(c, str) and f"]{OUTSIDE}" in c
               for column in table.columns for c in column.cells)


def simple_table(title: str, caption: str | None = None, *, tight: bool = False) -> Table:
    """An empty table in the package's terminal style; ``tight``: two spaces between columns,
    not three (ten metrics and a name then fit 80 columns)."""
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
                 caption=caption, padding=(0, 1, 0, 0) if tight else (0, 1))


def _caption(*lines: str | None) -> str | None:
    shown = [line for line in lines if line]
    return "\n".join(shown) if shown else None


def file_labels(results: dict) -> Labels:
    """Each result's short label (:func:`confeval.report.labels.short_labels`): file stems,
    what every name shares at its start and end dropped."""
    return short_labels([str(name) for name in results])


def file_names(results: dict) -> list[str]:
    """Each result's short label (see :func:`file_labels`)."""
    return file_labels(results).labels


def file_table(title: str, headers: Sequence[str], results: dict
               ) -> tuple[Table, list[list[str]]]:
    """An empty long-format table (right-aligned ``headers``) and each result's leading
    cells: with one file, its name goes into the title, where it wraps whole, and rows
    have no file cell; with several, a ``file`` column of short labels leads (what they
    stand for in the caption). Call :func:`fit_lead_column` once the rows are in."""
    labels = file_labels(results)
    if len(labels.labels) == 1:
        table = simple_table(f"{title}: {labels.labels[0]}", tight=True)
        leads: list[list[str]] = [[]]
    else:
        table = simple_table(title, _caption(labels.key()), tight=True)
        table.add_column("file", no_wrap=True)
        leads = [[name] for name in labels.labels]
    for header in headers:
        table.add_column(header, justify="right", no_wrap=True)
    return table, leads


def fit_lead_column(table: Table, width: int | None = None) -> Table:
    """``table`` itself, its first column's labels wrapped at their separators (never inside a
    word) by as much as the table is wider than ``width`` (default the terminal's), down to
    :data:`NARROWEST_LABEL` columns."""
    width = width or terminal_width()
    over = natural_width(table) - width
    if over <= 0 or not table.columns:
        return table
    lead = table.columns[0]
    # rich keeps a column's cells in Column._cells (the public Column.cells only reads them)
    longest = _longest_line(lead._cells)
    words = max((longest_part(c) for c in lead._cells if isinstance(c, str)), default=0)
    room = max(longest - over, NARROWEST_LABEL, len(str(lead.header)), words)
    lead._cells = [wrap_label(c, room) if isinstance(c, str) else c for c in lead._cells]
    return table


def blank(lead: list[str]) -> list[str]:
    """The leading cells of a result's later rows: empty."""
    return [""] * len(lead)


def number(value) -> str:
    """A cell: ``–`` for None, an int with separators, else 3 decimals; a ``{mean, ...}``
    summary over seeds by its mean."""
    if isinstance(value, dict):
        value = value.get("mean")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,}" if isinstance(value, int) else f"{value:.3f}"


def results_table(results: dict, columns: Sequence[tuple[str, str]], title: str) -> Table:
    """One row per input (its short label), one column per (key, header), when that fits the
    terminal; else one row per metric and one column per input, when that fits; else rows
    per input again, their labels wrapped at separators. No header is cut ("Spearm…") and no
    word broken ("overconfiden/t")."""
    width = terminal_width()
    with_ci = width >= WIDE_ENOUGH_FOR_INTERVALS
    resampled = any(_has_interval(res) for res in results.values())
    labels = file_labels(results)
    caption = _caption(None if with_ci or not resampled else
                       "95% intervals: see --json or the report", labels.key())
    by_row = _inputs_as_rows(results, labels.labels, columns, title, caption, with_ci)
    if fits(by_row, width):
        return by_row
    by_column = _inputs_as_columns(results, labels.labels, columns, title, caption, with_ci)
    if fits(by_column, width):
        return by_column
    # neither fits with its labels on one line: wrap them, in the layout that then fits in
    # fewer lines (rows per input when neither does: its metric columns never shrink)
    wrapped_rows = fit_lead_column(by_row, width)
    candidates = [t for t in (wrapped_rows, fit_headers(by_column, width)) if fits(t, width)]
    return min(candidates, key=lambda t: _lines(t, width)) if candidates else wrapped_rows


def _has_interval(res) -> bool:
    """Whether a result's ``ci`` holds at least one interval with bounds: ``{"low", "high"}``
    itself (an exact interval) or a map of them by metric (the bootstrap's; two or three rows
    give NaN bounds, and then there is nothing to see in --json either)."""
    ci = res.get("ci") if isinstance(res, dict) else None
    if not isinstance(ci, dict):
        return False
    if "low" in ci:
        low = ci["low"]
        return isinstance(low, (int, float)) and math.isfinite(low)
    return any(_has_interval({"ci": bounds}) for bounds in ci.values())


def _lines(table: Table, width: int) -> int:
    """How many lines ``table`` takes on a terminal ``width`` columns wide."""
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(table)
    return len(console.export_text().splitlines())


def _longest_line(cells) -> int:
    return max((len(line) for c in cells if isinstance(c, str) for line in c.splitlines()),
               default=0)


def fit_headers(table: Table, width: int | None = None) -> Table:
    """``table`` itself, the headers of its columns after the first wrapped at their
    separators (never inside a word) by as much as the table is wider than ``width``, each no
    narrower than its cells or :data:`NARROWEST_LABEL`."""
    width = width or terminal_width()
    over = natural_width(table) - width
    named = table.columns[1:]
    if over <= 0 or not named:
        return table
    cut = math.ceil(over / len(named))
    for column in named:
        header = str(column.header)
        room = max(len(header) - cut, _longest_line(column._cells), NARROWEST_LABEL,
                   longest_part(header))
        column.header = wrap_label(header, room)
    return table


def _inputs_as_rows(results: dict, labels: list[str], columns: Sequence[tuple[str, str]],
                    title: str, caption: str | None, with_ci: bool) -> Table:
    table = simple_table(title, caption, tight=True)
    table.add_column("file", no_wrap=True)
    for _, header in columns:
        table.add_column(header, justify="right", no_wrap=True)
    for label, res in zip(labels, results.values()):
        table.add_row(label, *[cell(res, key, with_ci) for key, _ in columns])
    return table


def _inputs_as_columns(results: dict, labels: list[str], columns: Sequence[tuple[str, str]],
                       title: str, caption: str | None, with_ci: bool) -> Table:
    table = simple_table(title, caption, tight=True)
    table.add_column("metric", no_wrap=True)
    for label in labels:
        table.add_column(label, justify="right", no_wrap=True)
    for key, header in columns:
        table.add_row(header, *[cell(res, key, with_ci) for res in results.values()])
    return table


CONFIDENCE_COLUMNS = [("n", "n"), ("accuracy", "acc"), ("ece", "ECE"), ("mce", "MCE"),
                      ("brier", "Brier"), ("auroc", "AUROC"), ("auarc", "AUARC"),
                      ("prr", "PRR"), ("rce", "RCE")]
AGREEMENT_COLUMNS = [("n", "n"), ("pearson", "Pearson"), ("spearman", "Spearman"),
                     ("kendall", "Kendall"), ("accuracy", "exact"), ("within1", "±1"),
                     ("mae", "MAE"), ("bias", "bias"), ("top_prob_ece", "top-p ECE")]


@register_table("confidence")
def confidence_table(results: dict) -> Table:
    return results_table(results, CONFIDENCE_COLUMNS, "Confidence vs correctness")


@register_table("agreement")
def agreement_table(results: dict) -> Table:
    return results_table(results, AGREEMENT_COLUMNS, "Judge vs reference scores")


def compare_tables(document: dict) -> list[tuple[str | None, Table]]:
    """``confeval compare``'s terminal output, (verdict, table) in order: one ranked table per
    metric — rank (and its 95% interval), model, value [interval], group letters — with the
    metric's verdict (:func:`confeval.report.verdicts.compare_verdict`, the report's rule:
    two models' difference with its interval and p-value, or the first-ranked model against
    the others), then the tables of a second comparison, when the suite has one (the measures
    over all models; no verdict). ``--suite auto``: each suite's, titled by the suite, then
    the trust cards. Names longer than :data:`~confeval._text.NAME_WIDTH` are shortened
    (``--json`` has them whole); what is said once under the tables is
    :func:`compare_notes`."""
    doc = document["compare"]
    if "suites" in doc:
        tables = [t for suite, sub in doc["suites"].items()
                  for t in _suite_tables(sub, f"{suite}: ")]
        return [*tables, (None, card_table(doc["cards"]))]
    return _suite_tables(doc, "")


def compare_notes(document: dict) -> list[str]:
    """What ``confeval compare`` says once, under its tables: each model that lacks items
    another model has ("judge2 lacks 5 items the others have": those ids are left out of the
    comparison for every model), then each warning (pairs without a p-value, letters that are
    a cover), counted."""
    doc = document["compare"]
    subs = doc["suites"].items() if "suites" in doc else [("", doc)]
    notes = []
    for suite, sub in subs:
        prefix = f"{suite}: " if suite else ""
        notes += [f"{prefix}{display_name(name)} lacks {count:,} item"
                  f"{'' if count == 1 else 's'} the others have (compared on the "
                  f"{sub['n_items_shared']:,} every model has)"
                  for name, count in (sub.get("not_shared") or {}).items() if count]
    notes += [f"warning: {w}" for w in doc.get("warnings") or []]
    if any(marks_outside(table) for _, table in compare_tables(document)):
        notes.append(OUTSIDE_NOTE)
    return notes


def _suite_tables(doc: dict, prefix: str) -> list[tuple[str | None, Table]]:
    from .verdicts import compare_verdict, comparison_results

    tables = [(compare_verdict(table), _ranked_table(
        f"{prefix}{metric} ({_direction(table)}), {doc['n_items_shared']:,} shared items",
        table, "model")) for metric, table in comparison_results(doc).items()]
    for key, block in doc.items():
        if isinstance(block, dict) and "ranked" in block and "metrics" in block:
            tables += [(None, _ranked_table(f"{prefix}{key.replace('_', ' ')}: {metric} "
                                            f"({_direction(table)})", table, "entry"))
                       for metric, table in block["metrics"].items()]
    return tables


def card_table(cards: dict) -> Table:
    """The trust cards as one table: a row per model, a column per aspect with the value and
    the rank among the models compared on it."""
    aspects = list(dict.fromkeys(a for card in cards.values() for a in card))
    t = simple_table("trust cards (value, rank of the models compared, group)")
    t.add_column("model", justify="left")
    for aspect in aspects:
        t.add_column(aspect, justify="right")
    shown = display_names(cards)
    for model, card in cards.items():
        t.add_row(shown[model], *(f"{number(card[a]['value'])} #{card[a]['rank']}/"
                                  f"{card[a]['of']} {card[a]['group'] or '–'}" if a in card
                                  else "–" for a in aspects))
    return t


def _direction(table: dict) -> str:
    from ..metrics.compare import direction_text

    return direction_text(table)


def _ranked_table(title: str, table: dict, what: str) -> Table:
    t = simple_table(title)
    for header in ("rank", what, "value [95%]", "group"):
        # a shortened name on a narrow terminal wraps whole rather than losing more of it
        t.add_column(header, justify="left" if header == what else "right",
                     overflow="fold" if header == what else "ellipsis")
    shown = display_names(table["models"])
    for name, row in sorted(table["models"].items(), key=lambda kv: kv[1]["rank"]):
        span = (f" [{row['rank_low']:g}-{row['rank_high']:g}]"
                if row["rank_low"] == row["rank_low"] else "")
        value = number(row["value"])
        if row["low"] == row["low"] and isinstance(row["value"], float) and \
                row["value"] == row["value"]:
            value = with_interval(row["value"], row["low"], row["high"])
        elif row["low"] == row["low"]:
            value += f" [{number(row['low'])}, {number(row['high'])}]"
        t.add_row(f"{row['rank']}{span}", shown[name], value, row["group"] or "–")
    return t
