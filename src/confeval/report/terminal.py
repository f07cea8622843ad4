"""Terminal tables of results: one per section kind, beside its HTML renderer (a suite's in
``report/sections/<suite>.py``), looked up in :data:`TERMINAL_TABLES` by the command line and
by ``confeval run``/``demo`` for every section they print."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table

from .._text import display_name, display_names
from .registries import TERMINAL_TABLES

__all__ = ["TERMINAL_TABLES", "blank", "cell", "compare_notes", "compare_tables", "file_names",
           "file_table", "number", "register_table", "results_table", "simple_table"]

register_table = TERMINAL_TABLES.register

WIDE_ENOUGH_FOR_INTERVALS = 200
"""Terminal columns from which metric tables show 95% intervals beside values (--json and the
report always have them)."""


def cell(res: dict, key: str, with_ci: bool) -> str:
    """A table cell: the value, with its 95% interval when ``with_ci``."""
    value = res.get(key)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, int):
        return f"{value:,}"
    ci = (res.get("ci") or {}).get(key)
    text = f"{value:.3f}"
    if with_ci and ci and isinstance(ci.get("low"), float) and not math.isnan(ci["low"]):
        text += f" [{ci['low']:.3f}, {ci['high']:.3f}]"
    return text


def simple_table(title: str, caption: str | None = None) -> Table:
    """An empty table in the package's terminal style."""
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
                 caption=caption)


def file_table(title: str, headers: Sequence[str], results: dict
               ) -> tuple[Table, list[list[str]]]:
    """An empty long-format table (right-aligned ``headers``) and each result's leading
    cells: with one file, its name goes into the title, where it wraps whole, and rows
    have no file cell; with several, a ``file`` column leads."""
    names = file_names(results)
    if len(names) == 1:
        table = simple_table(f"{title}: {names[0]}")
        leads: list[list[str]] = [[]]
    else:
        table = simple_table(title)
        table.add_column("file", overflow="fold", min_width=15)
        leads = [[name] for name in names]
    for header in headers:
        table.add_column(header, justify="right", no_wrap=True)
    return table, leads


def blank(lead: list[str]) -> list[str]:
    """The leading cells of a result's later rows: empty."""
    return [""] * len(lead)


def file_names(results: dict) -> list[str]:
    """Each result's file name, with its folder when two files share a name (two runs'
    ``records.jsonl``, two judges' ``features_s2.csv``)."""
    names = [Path(source).name for source in results]
    if len(set(names)) == len(names):
        return names
    return [str(Path(Path(source).parent.name) / Path(source).name) for source in results]


def number(value) -> str:
    """A cell: ``–`` for None, an int with separators, else 3 decimals; a ``{mean, ...}``
    summary over seeds by its mean."""
    if isinstance(value, dict):
        value = value.get("mean")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,}" if isinstance(value, int) else f"{value:.3f}"


def results_table(results: dict, columns: Sequence[tuple[str, str]], title: str) -> Table:
    """One row per file, one column per (key, header); on a terminal too narrow for that
    (80 columns against ten metrics), one row per metric and one column per file, so no
    header is cut ("Spearm…") and no name split."""
    width = Console().width
    with_ci = width >= WIDE_ENOUGH_FOR_INTERVALS
    resampled = any(res.get("ci") for res in results.values())   # not with --bootstrap 0
    caption = None if with_ci or not resampled else \
        "95% bootstrap intervals: see --json or the report"
    names = file_names(results)
    needed = max(map(len, names), default=4) + sum(max(len(h), 6) + 3 for _, h in columns)
    if needed > width and len(results) < len(columns):
        table = simple_table(title, caption)
        table.add_column("metric")
        for name in names:
            table.add_column(name, justify="right", overflow="fold")
        for key, header in columns:
            table.add_row(header, *[cell(res, key, with_ci) for res in results.values()])
        return table
    table = simple_table(title, caption)
    table.add_column("file", overflow="fold", min_width=15)
    for _, header in columns:
        table.add_column(header, justify="right", no_wrap=True)
    for name, res in zip(names, results.values()):
        table.add_row(name, *[cell(res, key, with_ci) for key, _ in columns])
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


def compare_tables(document: dict) -> list[Table]:
    """``confeval compare``'s terminal output: one ranked table per metric — rank (and its
    95% interval), model, value [interval], group letters — then the tables of a second
    comparison, when the suite has one (the measures over all models). ``--suite auto``: each
    suite's tables, titled by the suite, then the trust cards. Names longer than
    :data:`~confeval._text.NAME_WIDTH` are shortened (``--json`` has them whole); what is said
    once under the tables is :func:`compare_notes`."""
    doc = document["compare"]
    if "suites" in doc:
        tables = [t for suite, sub in doc["suites"].items()
                  for t in _suite_tables(sub, f"{suite}: ")]
        return [*tables, card_table(doc["cards"])]
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
    return notes


def _suite_tables(doc: dict, prefix: str) -> list[Table]:
    tables = [_ranked_table(f"{prefix}{metric} ({_direction(table)}), "
                            f"{doc['n_items_shared']:,} shared items", table, "model")
              for metric, table in doc["metrics"].items()]
    for key, block in doc.items():
        if isinstance(block, dict) and "ranked" in block and "metrics" in block:
            tables += [_ranked_table(f"{prefix}{key.replace('_', ' ')}: {metric} "
                                     f"({_direction(table)})", table, "entry")
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
    return "higher is better" if table["higher_is_better"] else "lower is better"


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
        if row["low"] == row["low"]:
            value += f" [{number(row['low'])}, {number(row['high'])}]"
        t.add_row(f"{row['rank']}{span}", shown[name], value, row["group"] or "–")
    return t
