"""HTML reports: :func:`render_report` turns a run's metrics into a self-contained page;
:func:`publish` finishes a run folder (metrics.json, then report.html)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..runs import RunFolder
from . import sections
from .html import SECTION_RENDERERS, metric_table, register_section, render_report
from .terminal import TERMINAL_TABLES, register_table

__all__ = ["SECTION_RENDERERS", "TERMINAL_TABLES", "metric_table", "publish", "register_section",
           "register_table", "render_report", "sections"]


def publish(run: RunFolder, metrics: Mapping[str, Any]) -> None:
    """Finish a run folder: write metrics.json, then report.html rendered from it and from
    run.json (when the folder has one). Every command that writes a run folder ends here."""
    run.write_metrics(metrics)
    info = run.read_run() if run.file(RunFolder.RUN).is_file() else None
    run.write_report(render_report(metrics, info))
