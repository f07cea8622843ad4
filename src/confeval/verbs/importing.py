"""``confeval import FILE --suite NAME``: another tool's file written as a suite's records (the
layout ``confeval NAME score`` reads with no column flag), to look at before scoring —
written once, with the suite's own layout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..suites import SUITES
from ..suites.options import MAX_RATINGS

__all__ = ["importable", "import_file"]


def importable() -> list[str]:
    """The suites with a layout for other tools' files."""
    return [name for name, suite in SUITES.items() if suite.ingests]


def import_file(path: str | Path, suite: str, from_format: str = "auto",
                normalise: str = "none", *, data: str | None = None,
                levels: tuple[int, ...] = (1, 2, 3, 4, 5), filter_name: str | None = None,
                scorer: str | None = None, epochs: str = "each") -> tuple[Any, dict]:
    """(the usable rows of ``path`` in ``suite``'s layout, the counts ``{n_read, n_used,
    excluded}``; every lm-eval filter and Inspect scorer unless ``filter_name`` or ``scorer``
    names one, each row naming its own); a file of no known format, or one the suite has no
    layout for, is one :class:`ValueError` naming the file."""
    from ..ingest import import_records

    if suite not in importable():
        raise ValueError(f"--suite {suite!r}: confeval import writes the layout of "
                         f"{', '.join(importable())}")
    if not 1 <= len(levels) <= MAX_RATINGS:
        raise ValueError(f"--min-score to --max-score: 1 to {MAX_RATINGS} ratings, got "
                         f"{len(levels)}")
    from .score import load_layout_error

    with load_layout_error():
        return import_records(path, SUITES[suite].layout(), from_format, normalise,
                              data=data, levels=levels, filter_name=filter_name,
                              scorer=scorer, epochs=epochs)
