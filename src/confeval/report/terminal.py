"""Terminal tables of results: one per section kind, beside its HTML renderer (a suite's in
``report/sections/<suite>.py``), looked up in :data:`TERMINAL_TABLES` by the command line and
by ``confeval run``/``demo`` for every section they print."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table

from .._registry import Registry

__all__ = ["TERMINAL_TABLES", "cell", "file_table", "number", "register_table", "results_table",
           "simple_table"]

TERMINAL_TABLES: Registry[Callable[[dict], Table]] = Registry("terminal table")
"""Section kind -> ``fn(results) -> rich Table``."""

register_table = TERMINAL_TABLES.register

WIDE_ENOUGH_FOR_INTERVALS = 200
"""Terminal columns from which metric tables show 95% intervals beside values (--json and the
report always have them)."""


def cell(res: dict, key: str, with_ci: bool) -> str:
    """A table cell: the value, with its 95% interval when ``with_ci``."""
    value = res.get(key)
    if value is None:
        return "–"
    if isinstance(value, int):
        return f"{value:,}"
    ci = (res.get("ci") or {}).get(key)
    text = f"{value:.3f}"
    if with_ci and ci and ci.get("low") is not None:
        text += f" [{ci['low']:.3f}, {ci['high']:.3f}]"
    return text


def simple_table(title: str, caption: str | None = None) -> Table:
    """An empty table in the package's terminal style."""
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
                 caption=caption)


def file_table(title: str, headers: Sequence[str]) -> Table:
    """An empty long-format table: a ``file`` column, then right-aligned ``headers``."""
    table = simple_table(title)
    table.add_column("file", overflow="fold", min_width=15)
    for header in headers:
        table.add_column(header, justify="right", no_wrap=True)
    return table


def number(value) -> str:
    """A cell: ``–`` for None, an int with separators, else 3 decimals; a ``{mean, ...}``
    summary over seeds by its mean."""
    if isinstance(value, dict):
        value = value.get("mean")
    if value is None:
        return "–"
    return f"{value:,}" if isinstance(value, int) else f"{value:.3f}"


def results_table(results: dict, columns: Sequence[tuple[str, str]], title: str) -> Table:
    """One row per file, one column per (key, header)."""
    with_ci = Console().width >= WIDE_ENOUGH_FOR_INTERVALS
    table = simple_table(title, None if with_ci else
                         "95% bootstrap intervals: see --json or the report")
    table.add_column("file", overflow="fold", min_width=15)
    for _, header in columns:
        table.add_column(header, justify="right", no_wrap=True)
    for source, res in results.items():
        table.add_row(Path(source).name, *[cell(res, key, with_ci) for key, _ in columns])
    return table


# "n" is the rows a metric was computed on (the rows used, after exclusions)
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
