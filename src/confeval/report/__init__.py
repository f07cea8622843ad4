"""HTML reports: :func:`render_report` turns a run's metrics into a self-contained page;
:func:`publish` finishes a run folder (metrics.json, then report.html); the terminal tables.

The HTML side (matplotlib) is imported when first used: a command that prints a table or its
help does not pay for it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from ..runs import RunFolder
from .terminal import TERMINAL_TABLES, register_table

__all__ = ["SECTION_RENDERERS", "TERMINAL_TABLES", "metric_table", "publish", "register_section",
           "register_table", "render_report", "sections"]

_FROM_HTML = ("SECTION_RENDERERS", "metric_table", "register_section", "render_report")


def __getattr__(name: str) -> Any:
    if name in _FROM_HTML:
        return getattr(importlib.import_module(".html", __name__), name)
    if name == "sections":
        return importlib.import_module(".sections", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def publish(run: RunFolder, metrics: Mapping[str, Any]) -> None:
    """Finish a run folder: write metrics.json, then report.html rendered from it and from
    run.json (when the folder has one). Every command that writes a run folder ends here."""
    from .html import render_report

    run.write_metrics(metrics)
    info = run.read_run() if run.file(RunFolder.RUN).is_file() else None
    run.write_report(render_report(metrics, info))
