"""HTML reports: :func:`render_report` turns a run's metrics into a self-contained page;
:func:`publish` finishes a run folder (metrics.json, then report.html) and returns what the
report could not show (:class:`~confeval.report.html.ReportProblem`); the terminal tables;
the verdicts both open with (:data:`VERDICTS`, :mod:`confeval.report.verdicts`).

The HTML side (matplotlib) is imported when first used: a command that prints a table or its
help does not pay for it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..runs import RunFolder
from .registries import SECTION_RENDERERS, TERMINAL_TABLES
from .terminal import register_table

if TYPE_CHECKING:
    from .html import ReportProblem

__all__ = ["SECTION_RENDERERS", "TERMINAL_TABLES", "VERDICTS", "ReportProblem", "metric_table",
           "publish", "register_section", "register_table", "register_verdict", "render_report",
           "render_report_checked", "sections"]

_FROM_HTML = ("ReportProblem", "metric_table", "register_section", "render_report",
              "render_report_checked")
_FROM_VERDICTS = ("VERDICTS", "register_verdict")   # a large module: loaded when first used


def _register_sections() -> None:
    """Import the section modules: each registers its renderer and terminal table."""
    from . import sections  # noqa: F401


SECTION_RENDERERS.fill_with(_register_sections)
TERMINAL_TABLES.fill_with(_register_sections)


def __getattr__(name: str) -> Any:
    if name in _FROM_HTML:
        return getattr(importlib.import_module(".html", __name__), name)
    if name in _FROM_VERDICTS:
        return getattr(importlib.import_module(".verdicts", __name__), name)
    if name == "sections":
        return importlib.import_module(".sections", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def publish(run: RunFolder, metrics: Mapping[str, Any]) -> list[ReportProblem]:
    """Finish a run folder: write metrics.json, then report.html rendered from it and from
    run.json (when the folder has one). Every command that writes a run folder ends here.

    Returns what the report could not show (a chart not drawn, a section not rendered; each
    also said in the page), empty when it is complete. Both files are written either way; a
    command names each problem on stderr and ends with exit status 3
    (:func:`confeval.cli._common.report_incomplete`)."""
    from .html import render_report_checked

    run.write_metrics(metrics)
    info = run.read_run() if run.file(RunFolder.RUN).is_file() else None
    page, problems = render_report_checked(metrics, info)
    run.write_report(page)
    return problems
